// cxx_threads - the C++ standard library's threads over pthreads: std::thread,
// std::mutex, std::timed_mutex (try_lock_for: a clocked lock), std::condition_variable
// (wait_for: a clocked wait) and std::shared_mutex (a rwlock).  Counts on stderr.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

static std::mutex m;
static std::timed_mutex tm;
static std::condition_variable cv;
static std::shared_mutex sm;
static int produced = 0;

int main()
{
	const int rounds = 500;
	std::vector<std::thread> th;
	th.emplace_back([] {
		for (int i = 0; i < rounds; i++) {
			std::lock_guard<std::mutex> g(m);
			produced++;
			cv.notify_one();
		}
	});
	th.emplace_back([] {
		for (int i = 0; i < rounds; i++) {
			if (tm.try_lock_for(std::chrono::milliseconds(10)))
				tm.unlock();
			std::shared_lock<std::shared_mutex> s(sm);
		}
	});
	{
		std::unique_lock<std::mutex> l(m);
		cv.wait_for(l, std::chrono::seconds(5), [] { return produced >= rounds; });
	}
	for (int i = 0; i < rounds; i++)
		std::unique_lock<std::shared_mutex> w(sm);
	for (auto &t : th)
		t.join();
	std::fprintf(stderr, "threads 2\nmutex_unlock_min %d\ntimedlock %d\nrdlock %d\nwrlock %d\n", rounds + 1, rounds, rounds, rounds);
	return 0;
}
