// cxx_exit_locks - locks taken while threads end, in C++: each of THREADS
// threads has a thread_local object whose destructor (run by the C++ runtime
// when the thread ends, before glibc's key destructors) locks a std::mutex.
// Prints its own count of those locks.
//
//   cxx_exit_locks [THREADS]   (default 4)
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

static std::mutex m;
static long exit_locks;

struct on_exit_lock {
	int used = 0;
	~on_exit_lock()
	{
		std::lock_guard<std::mutex> g(m);
		exit_locks++;
	}
};

static thread_local on_exit_lock per_thread;

int main(int argc, char **argv)
{
	long n = argc > 1 ? std::atol(argv[1]) : 4;
	if (n < 1 || n > 1000) {
		std::fprintf(stderr, "usage: cxx_exit_locks [THREADS] (1-1000)\n");
		return 2;
	}
	std::vector<std::thread> threads;
	for (long i = 0; i < n; i++)
		threads.emplace_back([] { per_thread.used = 1; });
	for (auto &t : threads)
		t.join();
	std::printf("threads %ld exit_locks %ld\n", n, exit_locks);
	return 0;
}
