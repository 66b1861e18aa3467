/* clock.c - conversion between trace ticks and nanoseconds since start. */
#include "ptt_trace.h"

void ptt_clock_init(struct ptt_clock *c, uint64_t start_ticks, uint64_t hz)
{
	c->start_ticks = start_ticks;
	c->hz = hz ? hz : 1000000000u;
	/* 32.32 fixed point: exact for ns clocks, < 1 ppb error for GHz TSCs */
	c->mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / c->hz);
}

uint64_t ptt_clock_ns(const struct ptt_clock *c, uint64_t ticks)
{
	if (ticks <= c->start_ticks)
		return 0;
	return (uint64_t)(((unsigned __int128)(ticks - c->start_ticks) * c->mult) >> 32);
}

/*
 * The first tick whose time is ns or later: start + ceil((ns << 32) / mult), the least t with
 * ((t - start) * mult) >> 32 >= ns; UINT64_MAX when no tick reaches ns (a time past the last
 * tick, or a clock rate so high that mult is 0: every tick is then at 0 ns).
 */
uint64_t ptt_clock_ticks(const struct ptt_clock *c, uint64_t ns)
{
	if (!c->mult)
		return ns ? UINT64_MAX : c->start_ticks;
	unsigned __int128 t = c->start_ticks + ((((unsigned __int128)ns << 32) + c->mult - 1) / c->mult);
	return t > UINT64_MAX ? UINT64_MAX : (uint64_t)t;
}
