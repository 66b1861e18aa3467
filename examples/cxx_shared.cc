// cxx_shared - std::shared_mutex (readers and a writer) and std::mutex taken
// through std::unique_lock / std::shared_lock, whose code libstdc++'s headers
// inline into the program: ptt names the program's own lines (reader_loop,
// writer_loop), never shared_mutex or gthr-default.h.  Prints its ground
// truth: the reads and writes made.
#include <cstdio>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

static std::shared_mutex table_lock;
static std::mutex log_lock;
static volatile long table[64];
static long reads, writes, logged;

__attribute__((noinline)) static void reader_loop(int rounds)
{
	long sum = 0;
	for (int i = 0; i < rounds; i++) {
		std::shared_lock<std::shared_mutex> r(table_lock);
		for (int k = 0; k < 64; k++)
			sum += table[k];
		__atomic_fetch_add(&reads, 1, __ATOMIC_RELAXED);
	}
	std::lock_guard<std::mutex> g(log_lock);
	logged += sum != 0;
}

__attribute__((noinline)) static void writer_loop(int rounds)
{
	for (int i = 0; i < rounds; i++) {
		std::unique_lock<std::shared_mutex> w(table_lock);
		for (int k = 0; k < 64; k++)
			table[k] += i;
		writes++;
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? std::atoi(argv[1]) : 3000;
	std::vector<std::thread> th;
	for (int i = 0; i < 3; i++)
		th.emplace_back(reader_loop, rounds);
	th.emplace_back(writer_loop, rounds);
	for (auto &t : th)
		t.join();
	std::printf("reads: %ld (expected %d)\n", reads, 3 * rounds);
	std::printf("writes: %ld (expected %d)\n", writes, rounds);
	return 0;
}
