/* symbols.c - addresses to function+offset (module) and file:line with libdwfl; display names. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>

#include "host.h"
#include "pyframes.h"
#include "symbols.h"
#include "shmap.h"

/* A file named by module events, checked once against the build-id recorded with it. */
struct file_check {
	char *path, *build_id; /* build_id: hex as recorded, "" when the trace has none */
	const char *reason;    /* NULL: name from it; else why not (static text or in why) */
	char why[160];
	int told;              /* the reason was reported (ptt_syms_set_warn) */
	struct file_check *next;
};

struct module {
	uint64_t base;
	char *path;
	uint64_t lo, hi;         /* its extent (module_build_id); 0, 0: unknown (a trace without it) */
	char *build_id;          /* hex as recorded, NULL: not recorded */
	struct file_check *file; /* set at the report: NULL until then */
};

/* One address space: a process between its begin (or exec) and its end. */
struct space {
	Dwfl *dwfl;
	int dirty;            /* modules learnt since the last report to dwfl */
	struct module *mods;
	size_t nmods, cap;
	struct ptt_map cache;    /* address -> struct ptt_sym */
	char *cmd;            /* base name of the command */
	struct space *before; /* the image before its last exec: names what the current one does not map */
};

struct sym_entry { /* a cached lookup; its strings live in the same allocation's list */
	struct ptt_sym sym;
	struct sym_entry *next;
	char buf[];
};

struct thread_info {
	uint64_t start;
};

/*
 * The text form's note of the last sites seen (ptt_syms_note, once per
 * event of ptt-dump): a program's events come from few call sites, so a
 * small direct-mapped table answers nearly all without the hash maps.
 * Emptied whenever what a lookup would say can change (a module learnt,
 * an address space begun again or copied).
 */
#define NOTE_SLOTS 256
struct note_slot {
	uint64_t addr;  /* 0: empty (an event without a site has no note) */
	uint32_t pid;
	uint32_t len;
	const char *text;
	char head[40];  /* the text when shorter: copied whole, a fixed size (no memcpy call) */
};

struct ptt_syms {
	struct note_slot notes[NOTE_SLOTS];
	struct ptt_map spaces;   /* pid -> struct space */
	struct ptt_map threads;  /* pid/tid -> struct thread_info */
	struct ptt_names *names;
	struct ptt_pyframes *py; /* Python frames (pyframes.c) */
	struct sym_entry *all; /* every lookup made, freed at the end (pointers stay valid) */
	struct file_check *files; /* every file checked, once each */
	void (*warn)(void *ctx, const char *path, const char *reason);
	void *warn_ctx;
	int warn_set;           /* ptt_syms_set_warn was called (warn NULL: silent) */
	int8_t site_arg[PTT_MAX_TYPES]; /* index of each type's "site" argument: -1 none, -2 type not seen yet */
	struct stripped *stripped; /* files with code named by offset for want of any symbol table */
	size_t nstripped;
	const struct shmap *shmap; /* names of objects in shared memory (ptt_syms_set_shmap) */
	struct ptt_map pids;       /* pid + 1 -> 1: the processes seen begin (ptt_syms_processes) */
};

size_t ptt_syms_processes(const struct ptt_syms *s) { return s ? s->pids.used : 0; }

void ptt_syms_set_shmap(struct ptt_syms *s, const struct shmap *m)
{
	if (s)
		s->shmap = m;
}

/* A file whose code has no symbol: no .symtab, and no debug information found for it here. */
struct stripped {
	char *path;
	int exe; /* a program (it has an interpreter), not a library */
	struct stripped *next;
};

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct ptt_syms *ptt_syms_new(void)
{
	struct ptt_syms *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->names = ptt_names_new();
	s->py = ptt_pyframes_new();
	if (!s->names || !s->py) {
		ptt_names_free(s->names);
		ptt_pyframes_free(s->py);
		free(s);
		return NULL;
	}
	memset(s->site_arg, -2, sizeof s->site_arg);
	return s;
}

/* A call site is the last argument, "site:ptr" (formats/events.def): its index, or -1. */
static int site_index(const struct ptt_type *t)
{
	if (!t || !t->nargs || t->argkind[t->nargs - 1] != PTT_ARG_PTR || t->argid[t->nargs - 1] != PTT_ARGNAME_SITE)
		return -1;
	return t->nargs - 1;
}

static void space_clear(struct space *sp)
{
	if (sp->dwfl)
		dwfl_end(sp->dwfl);
	sp->dwfl = NULL;
	for (size_t i = 0; i < sp->nmods; i++) {
		free(sp->mods[i].path);
		free(sp->mods[i].build_id);
	}
	free(sp->mods);
	sp->mods = NULL;
	sp->nmods = sp->cap = 0;
	ptt_map_free(&sp->cache);
	memset(&sp->cache, 0, sizeof sp->cache);
	free(sp->cmd);
	sp->cmd = NULL;
}

static void free_space(void *v)
{
	for (struct space *sp = v, *before; sp; sp = before) {
		before = sp->before;
		space_clear(sp);
		free(sp);
	}
}

void ptt_syms_free(struct ptt_syms *s)
{
	if (!s)
		return;
	ptt_map_free_with(&s->spaces, free_space);
	ptt_map_free(&s->pids);
	ptt_map_free_with(&s->threads, free);
	while (s->all) {
		struct sym_entry *e = s->all;
		s->all = e->next;
		free((char *)e->sym.next);
		if (e->sym.fn != e->sym.func)
			free((char *)e->sym.fn);
		free(e);
	}
	while (s->files) {
		struct file_check *f = s->files;
		s->files = f->next;
		free(f->path);
		free(f->build_id);
		free(f);
	}
	while (s->stripped) {
		struct stripped *x = s->stripped;
		s->stripped = x->next;
		free(x->path);
		free(x);
	}
	ptt_names_free(s->names);
	ptt_pyframes_free(s->py);
	free(s);
}

/* Code at an address of mod that no symbol names: is the file stripped (no .symtab, no debug
 * information found)?  Then it is noted once, for ptt_syms_stripped. */
static void note_stripped(struct ptt_syms *s, Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	const char *path = NULL;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &path, NULL);
	if (!path)
		return;
	for (const struct stripped *x = s->stripped; x; x = x->next)
		if (!strcmp(x->path, path))
			return;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while (elf && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return; /* a symbol table: this code is just not in it */
	if (dwfl_module_getdwarf(mod, &bias))
		return;
	struct stripped *x = malloc(sizeof *x);
	if (!x || !(x->path = strdup(path))) {
		free(x);
		return;
	}
	x->exe = 0;
	size_t nph = 0;
	GElf_Phdr ph;
	for (size_t i = 0; elf && elf_getphdrnum(elf, &nph) == 0 && i < nph; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_INTERP)
			x->exe = 1; /* the program itself (varnishd), named first: its sites are the user's */
	x->next = s->stripped;
	s->stripped = x;
	s->nstripped++;
}

size_t ptt_syms_stripped(const struct ptt_syms *s, const char **paths, size_t max)
{
	size_t n = 0;
	for (int exe = 1; exe >= 0; exe--) {
		size_t k = 0;
		for (const struct stripped *x = s->stripped; x; x = x->next)
			k += x->exe == exe;
		/* the list is newest first: the k of this kind, oldest first */
		for (size_t want = k; want-- > 0 && n < max;) {
			size_t i = 0;
			for (const struct stripped *x = s->stripped; x; x = x->next)
				if (x->exe == exe && i++ == want)
					paths[n++] = x->path;
		}
	}
	return s->nstripped;
}

const struct ptt_names *ptt_syms_names(const struct ptt_syms *s)
{
	return s->names;
}

static struct space *space_get(struct ptt_syms *s, uint32_t pid, int create)
{
	struct space *sp = ptt_map_get(&s->spaces, pid);
	if (!sp && create) {
		sp = calloc(1, sizeof *sp);
		if (sp && ptt_map_put(&s->spaces, pid, sp) != 0) {
			free(sp);
			sp = NULL;
		}
	}
	return sp;
}

/* The module at base (the last learnt there), or NULL. */
static struct module *space_module_at(struct space *sp, uint64_t base)
{
	for (size_t i = sp->nmods; i-- > 0;)
		if (sp->mods[i].base == base)
			return &sp->mods[i];
	return NULL;
}

/* What a module_build_id event says of the module at its base: its extent and build-id. */
static void module_set_id(struct module *m, uint64_t lo, uint64_t hi, const char *build_id)
{
	char *id = build_id ? strdup(build_id) : NULL;
	if (build_id && !id)
		return;
	free(m->build_id);
	m->build_id = id;
	m->lo = lo;
	m->hi = hi;
	m->file = NULL; /* checked anew at the next report */
}

static void space_add_module(struct space *sp, uint64_t base, const char *path)
{
	for (size_t i = 0; i < sp->nmods; i++)
		if (sp->mods[i].base == base && !strcmp(sp->mods[i].path, path))
			return;
	if (PTT_GROW(sp->mods, &sp->cap, sp->nmods + 1) != 0)
		return;
	char *p = strdup(path);
	if (!p)
		return;
	sp->mods[sp->nmods++] = (struct module){ .base = base, .path = p };
	sp->dirty = 1;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* The command's base name: the first word of process_begin's cmd, or an exec's path. */
static void space_set_cmd(struct space *sp, const char *cmd)
{
	size_t n = strcspn(cmd, " ");
	char word[256];
	if (n >= sizeof word)
		n = sizeof word - 1;
	memcpy(word, cmd, n);
	word[n] = 0;
	free(sp->cmd);
	sp->cmd = strdup(base_name(word));
}

static uint64_t thread_key(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

static void remember_start(struct ptt_syms *s, uint32_t pid, uint32_t tid, uint64_t start)
{
	if (!tid || !start)
		return;
	struct thread_info *t = ptt_map_get(&s->threads, thread_key(pid, tid));
	if (!t) {
		t = calloc(1, sizeof *t);
		if (!t || ptt_map_put(&s->threads, thread_key(pid, tid), t) != 0) {
			free(t);
			return;
		}
	}
	t->start = start;
}

void ptt_syms_update(struct ptt_syms *s, const struct ptt_event *ev)
{
	struct space *sp, *parent;
	ptt_names_update(s->names, ev);
	ptt_pyframes_update(s->py, ev);
	if (ev->id == PTT_EV_PROCESS_BEGIN && !ptt_map_get(&s->pids, (uint64_t)ev->pid + 1))
		ptt_map_put(&s->pids, (uint64_t)ev->pid + 1, s); /* no memory: counted short, names without their pid */
	if (ev->id < PTT_MAX_TYPES && s->site_arg[ev->id] == -2 && ev->type)
		s->site_arg[ev->id] = (int8_t)site_index(ev->type);
	if (ev->id == PTT_EV_MODULE || ev->id == PTT_EV_MODULE_BUILD_ID || ev->id == PTT_EV_PROCESS_BEGIN ||
	    ev->id == PTT_EV_PROCESS_FORK)
		memset(s->notes, 0, sizeof s->notes); /* what a site's note says may change */
	switch (ev->id) {
	case PTT_EV_MODULE:
		if ((sp = space_get(s, ev->pid, 1)))
			space_add_module(sp, ptt_event_argn(ev, PTT_ARGNAME_BASE, 0), ev->str);
		break;
	case PTT_EV_MODULE_BUILD_ID: {
		uint64_t base = ptt_event_argn(ev, PTT_ARGNAME_BASE, 0);
		struct module *m = (sp = space_get(s, ev->pid, 0)) ? space_module_at(sp, base) : NULL;
		if (m) {
			module_set_id(m, ptt_event_argn(ev, PTT_ARGNAME_LO, 0), ptt_event_argn(ev, PTT_ARGNAME_HI, 0), ev->str);
			sp->dirty = 1;
		}
		break;
	}
	case PTT_EV_PROCESS_BEGIN:
		/* a new image (the first, or after an exec): modules follow; the image before is kept to
		 * name what its events left (a site or an object printed at the end of the trace) */
		if ((sp = space_get(s, ev->pid, 1))) {
			struct space *old = sp->nmods ? malloc(sizeof *old) : NULL;
			if (old) {
				*old = *sp;
				memset(sp, 0, sizeof *sp);
				sp->before = old;
			} else {
				space_clear(sp);
			}
			space_set_cmd(sp, ev->str);
		}
		break;
	case PTT_EV_PROCESS_FORK: {
		/* the child runs the parent's image until it execs */
		uint64_t child = ptt_event_argn(ev, PTT_ARGNAME_CHILD, 0);
		if ((int32_t)child > 0 && (parent = space_get(s, ev->pid, 0)) &&
		    (sp = space_get(s, (uint32_t)child, 1)) && !sp->nmods) {
			for (size_t i = 0; i < parent->nmods; i++) {
				const struct module *pm = &parent->mods[i];
				space_add_module(sp, pm->base, pm->path);
				if (pm->build_id && sp->nmods && sp->mods[sp->nmods - 1].base == pm->base)
					module_set_id(&sp->mods[sp->nmods - 1], pm->lo, pm->hi, pm->build_id);
			}
			if (parent->cmd && !sp->cmd)
				sp->cmd = strdup(parent->cmd);
		}
		break;
	}
	case PTT_EV_THREAD_BEGIN:
		remember_start(s, ev->pid, ev->tid, ptt_event_argn(ev, PTT_ARGNAME_START, 0));
		break;
	case PTT_EV_THREAD_CREATE:
		remember_start(s, ev->pid, (uint32_t)ptt_event_argn(ev, PTT_ARGNAME_CHILD, 0),
			       ptt_event_argn(ev, PTT_ARGNAME_START, 0));
		break;
	default:
		break;
	}
}

static void warn_stderr(void *ctx, const char *path, const char *reason)
{
	(void)ctx;
	fprintf(stderr, "%s: %s: %s; its addresses are named by offset\n", program_invocation_short_name, path, reason);
}

void ptt_syms_set_warn(struct ptt_syms *s, void (*warn)(void *ctx, const char *path, const char *reason), void *ctx)
{
	s->warn = warn;
	s->warn_ctx = ctx;
	s->warn_set = 1;
}

/* Say once why file f does not name the addresses in it. */
static void tell(struct ptt_syms *s, struct file_check *f)
{
	if (!f || !f->reason || f->told)
		return;
	f->told = 1;
	if (!s->warn_set)
		warn_stderr(NULL, f->path, f->reason);
	else if (s->warn)
		s->warn(s->warn_ctx, f->path, f->reason);
}

/* The module of sp whose recorded extent holds addr and that names nothing here, or NULL. */
static const struct module *module_holding(const struct space *sp, uint64_t addr)
{
	for (size_t i = sp->nmods; i-- > 0;) {
		const struct module *m = &sp->mods[i];
		if (m->file && m->file->reason && addr >= m->lo && addr < m->hi)
			return m;
	}
	return NULL;
}

/* The GNU build-id of the ELF file open at fd in hex, into hex (empty without one); -1 if not ELF. */
static int file_build_id(int fd, char *hex, size_t size)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *id = NULL;
	ssize_t n = e && elf_kind(e) == ELF_K_ELF ? dwelf_elf_gnu_build_id(e, &id) : -1;
	int rc = e && elf_kind(e) == ELF_K_ELF ? 0 : -1;
	hex[0] = 0;
	for (ssize_t k = 0; id && k < n && (size_t)(2 * k + 2) < size; k++)
		snprintf(hex + 2 * k, 3, "%02x", ((const unsigned char *)id)[k]);
	if (e)
		elf_end(e);
	return rc;
}

/*
 * May the file at path name the addresses of a module recorded with build_id (hex, "" or NULL when
 * the trace did not record one)?  Checked once per file and build-id: the file must be there and,
 * when the trace knows the build-id, have the same.  A file changed since the recording (rebuilt,
 * another machine's library) names nothing, rather than name from the wrong symbols.
 */
static struct file_check *file_check(struct ptt_syms *s, const char *path, const char *build_id)
{
	const char *want = build_id ? build_id : "";
	for (struct file_check *f = s->files; f; f = f->next)
		if (!strcmp(f->path, path) && !strcmp(f->build_id, want))
			return f;
	struct file_check *f = calloc(1, sizeof *f);
	if (!f || !(f->path = strdup(path)) || !(f->build_id = strdup(want))) {
		if (f)
			free(f->path);
		free(f);
		return NULL;
	}
	f->next = s->files;
	s->files = f;
	if (!*want)
		return f; /* nothing to check against: dwfl says whether it can read it */
	char have[2 * 64 + 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(f->why, sizeof f->why, "%s", strerror(errno));
		f->reason = f->why;
	} else if (elf_version(EV_CURRENT) == EV_NONE || file_build_id(fd, have, sizeof have) != 0) {
		f->reason = "not an ELF file";
	} else if (strcmp(have, want) != 0) {
		f->reason = *have ? "not the file recorded (its build-id differs)" : "not the file recorded (it has no build-id)";
	}
	if (fd >= 0)
		close(fd);
	return f;
}

/*
 * Report the modules learnt to dwfl; 0 or -1 when there is no dwfl.  A
 * module learnt after a lookup (a converter that names things as it reads,
 * like ptt-dump --human) starts dwfl over and forgets the cached answers:
 * reporting again into the same Dwfl lost the modules reported before (the
 * program's own sites read as bare addresses), and an address looked up
 * before its module was known would stay unnamed.
 */
static int space_report(struct ptt_syms *s, struct space *sp)
{
	if (sp->dwfl && sp->dirty) {
		dwfl_end(sp->dwfl);
		sp->dwfl = NULL;
		ptt_map_free(&sp->cache); /* the entries stay in the list of all, freed at the end */
		memset(&sp->cache, 0, sizeof sp->cache);
	}
	if (!sp->dwfl) {
		sp->dwfl = dwfl_begin(&callbacks);
		if (!sp->dwfl)
			return -1;
		sp->dirty = 1;
	}
	if (!sp->dirty)
		return 0;
	dwfl_report_begin(sp->dwfl);
	for (size_t i = 0; i < sp->nmods; i++) {
		struct module *m = &sp->mods[i];
		if (!m->file)
			m->file = file_check(s, m->path, m->build_id);
		if (m->file && m->file->reason)
			continue; /* named module+0xoff from its extent (lookup), never from another file */
		if (!dwfl_report_elf(sp->dwfl, base_name(m->path), m->path, -1, m->base, false) && m->file) {
			snprintf(m->file->why, sizeof m->file->why, "%s", dwfl_errmsg(-1));
			m->file->reason = m->file->why;
		}
	}
	dwfl_report_end(sp->dwfl, NULL, NULL);
	sp->dirty = 0;
	return 0;
}

uint64_t ptt_syms_level(uint64_t addr, unsigned level)
{
	if (level > 126)
		level = 126;
	return PTT_SYMS_ADDR(addr) | (uint64_t)(level + 1) << PTT_SYMS_LEVEL_SHIFT;
}

/*
 * The DIEs under parent whose code holds pc, outermost first, into path from depth on (at most max in
 * all): their new number.  It descends into what owns code without having any itself (namespaces and
 * types: Rust and C++ nest functions there), which dwarf_getscopes does not do for every producer.
 */
static int dies_at(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *path, int depth, int max)
{
	Dwarf_Die ch;
	if (depth >= max || dwarf_child(parent, &ch) != 0)
		return depth;
	do {
		if (dwarf_haspc(&ch, pc) > 0) {
			path[depth] = ch;
			return dies_at(&path[depth], pc, path, depth + 1, max);
		}
		switch (dwarf_tag(&ch)) {
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type: {
			int d = dies_at(&ch, pc, path, depth, max);
			if (d > depth)
				return d;
			break;
		}
		default:
			break;
		}
	} while (dwarf_siblingof(&ch, &ch) == 0);
	return depth;
}

/*
 * The inline chain at at (an address of module mod): the function DIEs that hold it, innermost
 * first, ending at the physical function, into out (at most max); their number, 0 without DWARF.
 * What eu-addr2line -i and addr2line -i print.
 */
static int inline_chain(Dwfl_Module *mod, Dwarf_Addr at, Dwarf_Die *out, int max)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, at, &bias), path[256];
	int n = cu ? dies_at(cu, at - bias, path, 0, 256) : 0, k = 0;
	for (int i = n; i-- > 0 && k < max;) {
		int tag = dwarf_tag(&path[i]);
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram || tag == DW_TAG_entry_point)
			out[k++] = path[i];
		if (k && tag == DW_TAG_subprogram)
			break;
	}
	return k;
}

/* A function DIE's name (its abstract origin's): the linkage name demangled, else DW_AT_name. Malloc'd. */
static char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!link)
		link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	char *r = link ? ptt_demangle(link) : NULL;
	if (r) {
		/* a template's linkage name has its return type first ("std::cv_status std::condition_variable::
		 * __wait_until_impl<...>(...)"): the name starts after it, as the lock layer's patterns expect */
		int depth = 0;
		char *start = r;
		for (char *p = r; *p && !(*p == '(' && depth == 0); p++)
			if (*p == '<')
				depth++;
			else if (*p == '>' && depth > 0)
				depth--;
			else if (*p == ' ' && depth == 0)
				start = p + 1;
		if (start != r)
			memmove(r, start, strlen(start) + 1);
		return r;
	}
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	if (!name)
		return link ? strdup(link) : NULL;
	/* no linkage name (a C++ template instance): qualified by the namespaces and classes of the
	 * declaration that has the name ("std::condition_variable::wait_for<...>"), as the lock layer's
	 * patterns expect */
	Dwarf_Die decl = *die, next, *scopes = NULL;
	for (int hops = 0; hops < 8 && !dwarf_hasattr(&decl, DW_AT_name); hops++)
		if (dwarf_formref_die(dwarf_attr(&decl, DW_AT_abstract_origin, &a), &next) ||
		    dwarf_formref_die(dwarf_attr(&decl, DW_AT_specification, &a), &next))
			decl = next;
		else
			break;
	for (int hops = 0; hops < 8 && dwarf_formref_die(dwarf_attr(&decl, DW_AT_specification, &a), &next); hops++)
		decl = next;
	char q[1024];
	size_t len = 0;
	q[0] = 0;
	int n = dwarf_getscopes_die(&decl, &scopes);
	for (int i = n; i-- > 1;) {
		int tag = dwarf_tag(&scopes[i]);
		const char *sn = dwarf_diename(&scopes[i]);
		if (sn && (tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
			   tag == DW_TAG_union_type) && len + strlen(sn) + 3 < sizeof q)
			len += (size_t)snprintf(q + len, sizeof q - len, "%s::", sn);
	}
	free(scopes);
	if (!len)
		return strdup(name);
	char *out = malloc(len + strlen(name) + 1);
	if (out)
		sprintf(out, "%s%s", q, name);
	return out;
}

/* Where an inlined_subroutine DIE is called from, "file.c:42", into buf: 0, or -1 when DWARF does not say. */
static int call_line(Dwarf_Die *die, char *buf, size_t size)
{
	Dwarf_Attribute a;
	Dwarf_Word file = 0, line = 0;
	Dwarf_Files *files;
	size_t nfiles;
	Dwarf_Die cu;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &file) != 0 ||
	    dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &line) != 0 || !line)
		return -1;
	const char *src = dwarf_diecu(die, &cu, NULL, NULL) && dwarf_getsrcfiles(&cu, &files, &nfiles) == 0 && file < nfiles
		? dwarf_filesrc(files, file, NULL, NULL) : NULL;
	if (!src)
		return -1;
	const char *b = strrchr(src, '/');
	snprintf(buf, size, "%s:%llu", b ? b + 1 : src, (unsigned long long)line);
	return 0;
}

/* The name of the first function symbol of mod after at (its .symtab, else .dynsym), demangled: NULL for none. */
/* Code at at without a symbol: the function holding it, by the unwind tables' index (.eh_frame_hdr, sorted by
 * the start of each function's entry: the last start at or before at), as "module+0xSTART" in the file's
 * addresses; NULL without one, or in a layout of the index not read here (the linkers' is: pc-relative and
 * data-relative 4-byte words). */
static char *cfi_function(Dwfl_Module *mod, GElf_Addr at, const char *mname)
{
	Dwarf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	GElf_Addr file_at = at - bias;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (!name || strcmp(name, ".eh_frame_hdr") != 0 || sh.sh_type == SHT_NOBITS)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		const unsigned char *b = d ? d->d_buf : NULL;
		/* version 1; eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4 (pairs: start, FDE) */
		if (!b || d->d_size < 12 || b[0] != 1 || b[1] != 0x1b || b[2] != 0x03 || b[3] != 0x3b)
			return NULL;
		uint32_t n;
		memcpy(&n, b + 8, 4);
		if ((uint64_t)n * 8 > d->d_size - 12)
			return NULL;
		const unsigned char *t = b + 12;
		size_t lo = 0, hi = n; /* the last entry whose start is <= file_at */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			int32_t off;
			memcpy(&off, t + mid * 8, 4);
			if ((GElf_Addr)((int64_t)sh.sh_addr + off) <= file_at)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo)
			return NULL;
		int32_t off;
		memcpy(&off, t + (lo - 1) * 8, 4);
		char *fn = NULL;
		if (asprintf(&fn, "%s+0x%" PRIx64, mname ? mname : "?", (uint64_t)((int64_t)sh.sh_addr + off)) < 0)
			fn = NULL;
		return fn;
	}
	return NULL;
}

static char *next_function(Dwfl_Module *mod, GElf_Addr at)
{
	int n = dwfl_module_getsymtab(mod);
	const char *best = NULL;
	GElf_Addr best_at = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &a, NULL, NULL, NULL);
		if (name && *name && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF && a > at &&
		    (!best || a < best_at)) {
			best = name;
			best_at = a;
		}
	}
	if (!best)
		return NULL;
	char *r = ptt_demangle(best);
	return r ? r : strdup(best);
}

static struct ptt_sym *entry_new(struct ptt_syms *s, const char *func, const char *where, const char *line)
{
	size_t lf = func ? strlen(func) + 1 : 0, lw = strlen(where) + 1, ll = line ? strlen(line) + 1 : 0;
	size_t lt = lw + (line ? 4 + ll : 0);
	struct sym_entry *e = malloc(sizeof *e + lf + lw + ll + lt);
	if (!e)
		return NULL;
	char *p = e->buf;
	e->sym.func = func ? memcpy(p, func, lf) : NULL;
	p += lf;
	e->sym.where = memcpy(p, where, lw);
	p += lw;
	e->sym.line = line ? memcpy(p, line, ll) : NULL;
	p += ll;
	snprintf(p, lt, "%s%s%s", where, line ? " at " : "", line ? line : "");
	e->sym.text = p;
	e->sym.levels = 1;
	e->sym.next = NULL;
	e->sym.fn = e->sym.func;
	e->next = s->all;
	s->all = e;
	return &e->sym;
}

/* The frame that ends a stack the runtime cut at its depth (PTT_FRAME_CUT): said in every output that shows it. */
static const struct ptt_sym *cut_frame(struct ptt_syms *s, struct space *sp, uint64_t key, uint64_t addr)
{
	static const struct ptt_sym nomem = { NULL, "\u2026(cut)", NULL, "\u2026(cut)", 1, NULL, NULL };
	char where[64];
	snprintf(where, sizeof where, "\u2026(cut at %" PRIu32 " frames)", (uint32_t)addr);
	struct ptt_sym *e = entry_new(s, NULL, where, NULL);
	if (!e)
		return &nomem;
	ptt_map_put(&sp->cache, key, e);
	return e;
}

/*
 * Symbolise addr (a return address when code: the call is the byte before,
 * so symbol and line are looked up at addr - 1 while the offset shown is
 * that of addr itself, as perf and gdb show return addresses).
 */
static const struct ptt_sym *lookup(struct ptt_syms *s, uint32_t pid, uint64_t addr, int code)
{
	static const struct ptt_sym nomem = { NULL, "?", NULL, "?", 1, NULL, NULL };
	if (code && PTT_IS_PYFRAME(addr))
		return ptt_pyframes_sym(s->py, pid, addr);
	struct space *sp = space_get(s, pid, 1);
	if (!sp)
		return &nomem;
	uint64_t key = addr << 1 | (unsigned)code;
	struct ptt_sym *hit = ptt_map_get(&sp->cache, key);
	if (hit)
		return hit;
	if (code && PTT_IS_FRAME_CUT(addr))
		return cut_frame(s, sp, key, addr);
	char where[512], line[300], *linep = NULL, *readable = NULL, *inl = NULL, *next = NULL, *fn = NULL;
	const char *func = NULL;
	unsigned level = (unsigned)(addr >> PTT_SYMS_LEVEL_SHIFT), levels = 1;
	addr = PTT_SYMS_ADDR(addr);
	uint64_t at = code && addr ? addr - 1 : addr;
	Dwfl_Module *mod = space_report(s, sp) == 0 ? dwfl_addrmodule(sp->dwfl, at) : NULL;
	const struct module *unread = mod ? NULL : module_holding(sp, at);
	/* an address no module of the current image maps: an earlier image's, before an exec */
	for (struct space *b = sp->before; b && !mod && !unread; b = b->before) {
		mod = space_report(s, b) == 0 ? dwfl_addrmodule(b->dwfl, at) : NULL;
		unread = mod ? NULL : module_holding(b, at);
	}
	if (unread) {
		/* in an object the trace names but this machine cannot give: its offset, what addr2line
		 * takes on a machine that has the file, and why once */
		ptt_name_printf(where, sizeof where, "%s+0x%" PRIx64, base_name(unread->path), addr - unread->base);
		tell(s, unread->file);
	} else if (!mod) {
		snprintf(where, sizeof where, "0x%" PRIx64, addr);
	} else {
		const char *mname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
		GElf_Off off = 0;
		GElf_Sym sym;
		const char *name = dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL, NULL);
		/* a symbol that does not cover the address (stripped static code) names nothing */
		if (name && sym.st_size && off >= sym.st_size)
			name = NULL;
		/* nor, for data, one without a size past its start (a marker like _edata): the
		 * object a name stands for must hold the address */
		if (name && !code && !sym.st_size && off)
			name = NULL;
		uint64_t shown = off + (addr - at);
		if (name && *name) {
			readable = ptt_demangle(name); /* C++: as written, not as mangled */
			func = readable ? readable : name;
			if (shown)
				ptt_name_printf(where, sizeof where, "%s+0x%" PRIx64 " (%s)", func, shown, mname);
			else
				ptt_name_printf(where, sizeof where, "%s (%s)", func, mname);
		} else {
			/* offset in the file's address space: what objdump and addr2line take */
			Dwarf_Addr bias = 0;
			dwfl_module_getelf(mod, &bias);
			if (code) {
				note_stripped(s, mod);
				next = next_function(mod, at);
				fn = cfi_function(mod, at, mname);
			}
			ptt_name_printf(where, sizeof where, "%s+0x%" PRIx64, mname, addr - bias);
		}
		Dwfl_Line *l = dwfl_module_getsrc(mod, at);
		int lineno = 0;
		const char *src = l ? dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL) : NULL;
		if (src && lineno > 0) {
			snprintf(line, sizeof line, "%s:%d", base_name(src), lineno);
			linep = line;
		}
		if (code) {
			Dwarf_Die chain[128];
			int n = inline_chain(mod, at, chain, 128);
			levels = n > 1 ? (unsigned)n : 1;
			if (level && n > 1) {
				/* one level of the chain: its own function, at its own line */
				unsigned i = level - 1 < (unsigned)n ? level - 1 : (unsigned)n - 1;
				if (i)
					linep = call_line(&chain[i - 1], line, sizeof line) == 0 ? line : NULL;
				if (i + 1 < (unsigned)n && (inl = die_name(&chain[i]))) {
					char phys[sizeof where];
					memcpy(phys, where, sizeof phys);
					ptt_name_printf(where, sizeof where, "%s inlined in %s", inl, phys);
					func = inl;
				}
			}
		}
	}
	struct ptt_sym *e = entry_new(s, func, where, linep);
	free(readable);
	free(inl);
	if (!e) {
		free(next);
		free(fn);
		return &nomem;
	}
	e->levels = levels;
	e->next = next; /* owned by the entry: freed with it */
	if (fn && !e->func)
		e->fn = fn; /* owned too */
	else
		free(fn);
	ptt_map_put(&sp->cache, key, e);
	return e;
}

const struct ptt_sym *ptt_syms_code(struct ptt_syms *s, uint32_t pid, uint64_t addr)
{
	return lookup(s, pid, addr, 1);
}

const struct ptt_sym *ptt_syms_site(struct ptt_syms *s, const struct ptt_event *ev)
{
	int k = site_index(ev->type);
	if (k < 0 || !ev->arg[k])
		return NULL;
	return lookup(s, ev->pid, ev->arg[k], 1);
}

uint64_t ptt_syms_site_addr(const struct ptt_syms *s, unsigned id, const uint64_t *arg)
{
	int k = id < PTT_MAX_TYPES ? s->site_arg[id] : -1;
	return k >= 0 ? arg[k] : 0;
}

/* A stack_frames record's note: its frames, symbolised, innermost first ("a | b | c"). */
static size_t frames_note(struct ptt_syms *s, const struct ptt_event *ev, char *buf, size_t size)
{
	size_t len = 0;
	for (unsigned k = 2; k < ev->nargs && ev->type->argkind[k] == PTT_ARG_PTR && ev->arg[k]; k++) {
		const struct ptt_sym *f = lookup(s, ev->pid, ev->arg[k], 1);
		int w = snprintf(buf + len, size - len, "%s%s", len ? " | " : "", f->where);
		if (w < 0 || (size_t)w >= size - len)
			return size - 1;
		len += (size_t)w;
	}
	return len;
}

size_t ptt_syms_note(void *ctx, const struct ptt_event *ev, char *buf, size_t size)
{
	struct ptt_syms *s = ctx;
	if (ev->id == PTT_EV_STACK_FRAMES && ev->type && ev->type->role == PTT_ROLE_META && size)
		return frames_note(s, ev, buf, size);
	int k = site_index(ev->type);
	if (k < 0 || !ev->arg[k] || !size)
		return 0;
	uint64_t addr = ev->arg[k];
	struct note_slot *n = &s->notes[(addr ^ addr >> 8 ^ ev->pid) % NOTE_SLOTS];
	if (n->addr != addr || n->pid != ev->pid) {
		const struct ptt_sym *site = lookup(s, ev->pid, addr, 1);
		size_t len = strlen(site->text);
		*n = (struct note_slot){ addr, ev->pid, len > UINT32_MAX ? UINT32_MAX : (uint32_t)len, site->text, { 0 } };
		if (len < sizeof n->head)
			memcpy(n->head, site->text, len);
	}
	if (n->len < sizeof n->head && size >= sizeof n->head) {
		memcpy(buf, n->head, sizeof n->head); /* with its NUL */
		return n->len;
	}
	size_t len = n->len < size ? n->len : size - 1;
	memcpy(buf, n->text, len);
	buf[len] = 0;
	return len;
}

static size_t phrase(const struct ptt_sym *site, char *buf, size_t size)
{
	int w = 0;
	if (!size)
		return 0;
	buf[0] = 0;
	if (site && site->line && site->func)
		w = snprintf(buf, size, " at %s in %s", site->line, site->func);
	else if (site && site->func)
		w = snprintf(buf, size, " in %s", site->where);
	else if (site)
		w = snprintf(buf, size, " at %s", site->where);
	return w < 0 ? 0 : (size_t)w < size ? (size_t)w : size - 1;
}

size_t ptt_syms_site_phrase(struct ptt_syms *s, const struct ptt_event *ev, char *buf, size_t size)
{
	return phrase(ptt_syms_site(s, ev), buf, size);
}

size_t ptt_syms_code_phrase(struct ptt_syms *s, uint32_t pid, uint64_t addr, char *buf, size_t size)
{
	return phrase(addr ? ptt_syms_code(s, pid, addr) : NULL, buf, size);
}

size_t ptt_name_printf(char *buf, size_t size, const char *fmt, ...)
{
	static const char mark[] = "\u2026"; /* … (3 bytes in UTF-8: ptt_name_cut's) */
	if (size == 0)
		return 0;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0) {
		buf[0] = 0;
		return 0;
	}
	if ((size_t)n < size)
		return (size_t)n;
	if (size < sizeof mark)
		return size - 1; /* no room for the mark: a buffer this small holds no name */
	return ptt_name_cut(buf, size - sizeof mark);
}

size_t ptt_name_cut(char *buf, size_t keep)
{
	static const char mark[] = "\u2026";
	size_t at = keep;
	while (at > 0 && ((unsigned char)buf[at] & 0xc0) == 0x80)
		at--; /* not inside a character */
	memcpy(buf + at, mark, sizeof mark);
	return at + sizeof mark - 1;
}

const char *ptt_syms_process_name(struct ptt_syms *s, uint32_t pid, char *buf, size_t size)
{
	struct space *sp = space_get(s, pid, 0);
	if (sp && sp->cmd && *sp->cmd)
		ptt_name_printf(buf, size, "%s %" PRIu32, sp->cmd, host_local(pid)); /* the pid as its host gave it */
	else
		ptt_name_printf(buf, size, "process %" PRIu32, host_local(pid));
	return buf;
}

const char *ptt_syms_thread_known_name(struct ptt_syms *s, uint32_t pid, uint32_t tid, char *buf, size_t size)
{
	const char *given = ptt_names_thread(s->names, tid);
	struct thread_info *t = ptt_map_get(&s->threads, thread_key(pid, tid));
	struct space *sp;
	const struct ptt_sym *start;
	if (given && *given)
		ptt_name_printf(buf, size, "%s", given);
	else if (t && t->start && (start = lookup(s, pid, t->start, 0))->func)
		ptt_name_printf(buf, size, "%s", start->func);
	else if (tid == pid && (sp = space_get(s, pid, 0)) && sp->cmd && *sp->cmd)
		ptt_name_printf(buf, size, "%s", sp->cmd);
	else if (size)
		buf[0] = 0;
	return buf;
}

uint64_t ptt_syms_thread_start(const struct ptt_syms *s, uint32_t pid, uint32_t tid)
{
	const struct thread_info *t = ptt_map_get(&s->threads, thread_key(pid, tid));
	return t ? t->start : 0;
}

const char *ptt_syms_thread_name(struct ptt_syms *s, uint32_t pid, uint32_t tid, char *buf, size_t size)
{
	if (!*ptt_syms_thread_known_name(s, pid, tid, buf, size))
		ptt_name_printf(buf, size, "thread %" PRIu32, host_local(tid));
	return buf;
}

const char *ptt_syms_object_known_name(struct ptt_syms *s, uint32_t pid, uint64_t addr, char *buf, size_t size)
{
	/* a given name first (object_name, sem_open's: a shared object's is keyed by its shared address) */
	const char *given = ptt_names_object(s->names, addr);
	if (given && *given) {
		ptt_name_printf(buf, size, "%s", given);
		return buf;
	}
	if (PTT_IS_SHARED(addr)) /* in shared memory: by its mapping, whichever process asks */
		return shmap_name(s->shmap, addr, buf, size);
	const struct ptt_sym *sym = lookup(s, pid, addr, 0);
	if (sym->func && strcmp(sym->func, "_PyRuntime") == 0) {
		/* CPython's GIL, where the interpreter keeps it (ptt_syms_is_gil) */
		const char *paren = strchr(sym->where, ' ');
		ptt_name_printf(buf, size, "CPython GIL (%.*s)", (int)(paren ? paren - sym->where : (long)strlen(sym->where)), sym->where);
	} else if (sym->func) {
		/* a data symbol: "queue_lock", or "table+0x40" inside an array or struct */
		const char *plus = strchr(sym->where, '+'), *paren = strchr(sym->where, ' ');
		if (plus && (!paren || plus < paren))
			ptt_name_printf(buf, size, "%.*s", (int)(paren ? paren - sym->where : (long)strlen(sym->where)), sym->where);
		else
			ptt_name_printf(buf, size, "%s", sym->func);
	} else if (strncmp(sym->where, "0x", 2) != 0) {
		ptt_name_printf(buf, size, "%s", sym->where); /* module+0xoff */
	} else if (size) {
		buf[0] = 0;
	}
	return buf;
}

int ptt_syms_is_gil(struct ptt_syms *s, uint32_t pid, uint64_t addr)
{
	const struct ptt_sym *sym = lookup(s, pid, addr, 0);
	return sym->func && strcmp(sym->func, "_PyRuntime") == 0;
}

const char *ptt_syms_object_name(struct ptt_syms *s, uint32_t pid, uint64_t addr, char *buf, size_t size)
{
	if (!*ptt_syms_object_known_name(s, pid, addr, buf, size))
		ptt_name_printf(buf, size, "0x%" PRIx64, addr);
	return buf;
}

const char *ptt_name_escape(const char *name, enum ptt_escape form, char *buf, size_t size)
{
	size_t n = 0;
	int quote = form == PTT_ESC_CSV && strpbrk(name, ",\"\r\n") != NULL;
	if (!size)
		return buf;
#define PUT(c) do { if (n + 1 < size) buf[n++] = (c); } while (0)
	if (quote)
		PUT('"');
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		unsigned c = *p;
		switch (form) {
		case PTT_ESC_CSV:
			if (c == '"')
				PUT('"');
			PUT((char)c);
			break;
		case PTT_ESC_JSON:
			if (c == '"' || c == '\\') {
				PUT('\\');
				PUT((char)c);
			} else if (c < 0x20) {
				char u[8];
				snprintf(u, sizeof u, "\\u%04x", c);
				for (char *q = u; *q; q++)
					PUT(*q);
			} else {
				PUT((char)c);
			}
			break;
		case PTT_ESC_PAJE:
			/* ViTE writes names into SVG unescaped: keep XML's specials out */
			if (c == '&')
				PUT('+');
			else if (c == '<')
				PUT('[');
			else if (c == '>')
				PUT(']');
			else if (c == '"' || c == '\\' || c == '\'' || c == '#' || c < 0x20 || c == 0x7f)
				PUT('_');
			else
				PUT((char)c);
			break;
		}
	}
	if (quote)
		PUT('"');
#undef PUT
	buf[n] = 0;
	return buf;
}
