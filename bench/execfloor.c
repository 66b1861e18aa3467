/*
 * execfloor - what a process has cost by the time its main() runs, when the
 * bench's shell starts it (issue 36): the shell's fork copied into it, the
 * exec, the dynamic linker.  An untraced program pays this too; the
 * recorder's fixed cost (a run of true) holds it once more, for ptt-record
 * itself.  Prints the process's CPU time at main, in nanoseconds.
 */
#include <stdio.h>
#include <time.h>

int main(void)
{
	struct timespec t;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0)
		return 1;
	printf("%lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
	return 0;
}
