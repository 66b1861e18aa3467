/*
 * replay.c - runs a harness over files and directories of inputs without
 * libFuzzer (any compiler, e.g. gcc with ASan+UBSan): the corpus and the
 * crash inputs kept as regression files are replayed by make check.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: cannot open\n", path);
		return -1;
	}
	size_t cap = 1 << 16, len = 0, n;
	unsigned char *buf = malloc(cap);
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			unsigned char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	fclose(f);
	if (!buf)
		return -1;
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 1;
}

static int run_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: no such file or directory\n", path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int count = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char sub[4096];
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		int n = run_path(sub);
		if (n < 0) {
			count = -1;
			break;
		}
		count += n;
	}
	closedir(d);
	return count;
}

int main(int argc, char **argv)
{
	/* a harness may send stdout and stderr to /dev/null (fuzz_paje): report on a copy */
	FILE *report = fdopen(dup(2), "w");
	if (!report)
		return 1;
	int total = 0;
	for (int i = 1; i < argc; i++) {
		int n = run_path(argv[i]);
		if (n < 0)
			return 1;
		total += n;
	}
	fprintf(report, "replay: %d inputs, no crash\n", total);
	return fclose(report) != 0;
}
