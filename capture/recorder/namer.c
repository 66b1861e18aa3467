/* namer.c - ELF symbols for object addresses (libelf), for the recorder. */
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keeper.h"
#include "namer.h"
#include "../shm.h"

struct sym {
	uint64_t value, size;
	size_t name; /* offset in the image's names */
};

struct image { /* one ELF file's data symbols, sorted by value */
	char *path;
	struct sym *syms;
	size_t n;
	int pie;       /* ET_DYN: symbol values are relative to the load base */
	int loading;   /* being loaded by loader (namer_preload): join it before use */
	pthread_t loader;
	char *names;   /* the symbols' names, one after another */
	size_t names_len, names_cap;
};

struct module {
	uint32_t pid;
	uint64_t base;
	struct image *img;
};

/* what a record's id asks of the namer, decided once per id (namer_new) */
enum { LOOK_NOTHING = 0, LOOK_PROCESS, LOOK_MODULE, LOOK_NAMED, LOOK_OBJECT };

struct namer {
	uint8_t look[PTT_EV_BUILTIN_COUNT];
	struct image **images;
	size_t nimages;
	struct module *mods;
	size_t nmods;
	uint64_t *seen; /* open addressing set of (pid, address) keys already named or looked up */
	size_t seen_cap, seen_used;
	uint64_t last_key;
	uint64_t recent[64]; /* keys met lately, direct-mapped: a program alternating between a few objects misses last_key */
	struct keeper *keeper;
};

void namer_set_keeper(struct namer *n, struct keeper *k)
{
	if (n)
		n->keeper = k;
}

static int by_value(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->value < y->value ? -1 : x->value > y->value;
}

/*
 * The data symbols (STT_OBJECT with a size) of one ELF file: from .symtab
 * when it has one (.dynsym holds a subset of it), else .dynsym, read in
 * place; their names copied one after another into one buffer.  A large
 * program (node: 110 K symbols, 28 K of them objects) costs one pass over
 * its table and a sort, no call or allocation per symbol.
 */
static void read_table(struct image *img, Elf *e, Elf_Data *data, const GElf_Shdr *tsh, int class64);

static void load_symbols(struct image *img)
{
	int fd = open(img->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	if (!e || !gelf_getehdr(e, &eh)) {
		if (e)
			elf_end(e);
		close(fd);
		return;
	}
	img->pie = eh.e_type == ET_DYN;
	Elf_Scn *table = NULL;
	GElf_Shdr tsh = { 0 };
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize)
			continue;
		if (!table || sh.sh_type == SHT_SYMTAB) {
			table = scn;
			tsh = sh;
		}
	}
	Elf_Data *data = table ? elf_getdata(table, NULL) : NULL;
	if (data)
		read_table(img, e, data, &tsh, eh.e_ident[EI_CLASS] == ELFCLASS64);
	if (img->n)
		qsort(img->syms, img->n, sizeof *img->syms, by_value);
	elf_end(e);
	close(fd);
}

static void read_table(struct image *img, Elf *e, Elf_Data *data, const GElf_Shdr *tsh, int class64)
{
	size_t count = tsh->sh_size / tsh->sh_entsize, cap = 0;
	const Elf64_Sym *raw = class64 && data->d_type == ELF_T_SYM && data->d_size >= count * sizeof(Elf64_Sym) ?
			       data->d_buf : NULL;
	for (size_t i = 0; i < count; i++) {
		GElf_Sym s;
		if (raw) { /* the common case, without a call per symbol */
			if (ELF64_ST_TYPE(raw[i].st_info) != STT_OBJECT || !raw[i].st_size || raw[i].st_shndx == SHN_UNDEF)
				continue;
			s = raw[i];
		} else if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_OBJECT || !s.st_size ||
			   s.st_shndx == SHN_UNDEF) {
			continue;
		}
		const char *name = elf_strptr(e, tsh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		size_t len = strlen(name) + 1;
		if (img->n == cap) {
			cap = cap ? cap * 2 : 4096;
			struct sym *ns = realloc(img->syms, cap * sizeof *ns);
			if (!ns)
				break;
			img->syms = ns;
		}
		if (img->names_len + len > img->names_cap) {
			size_t nc = img->names_cap ? img->names_cap * 2 : 64 * 1024;
			while (nc < img->names_len + len)
				nc *= 2;
			char *nn = realloc(img->names, nc);
			if (!nn)
				break;
			img->names = nn;
			img->names_cap = nc;
		}
		memcpy(img->names + img->names_len, name, len);
		img->syms[img->n].value = s.st_value;
		img->syms[img->n].size = s.st_size;
		img->syms[img->n].name = img->names_len;
		img->names_len += len;
		img->n++;
	}
}

static void image_ready(struct image *img)
{
	if (img->loading) {
		pthread_join(img->loader, NULL);
		img->loading = 0;
	}
}

/* A new image of path in n's list, its symbols not loaded yet; NULL without memory. */
static struct image *add_image(struct namer *n, const char *path)
{
	struct image **ni = realloc(n->images, (n->nimages + 1) * sizeof *ni);
	struct image *img = ni ? calloc(1, sizeof *img) : NULL;
	if (ni)
		n->images = ni;
	if (!img || !(img->path = strdup(path))) {
		free(img);
		return NULL;
	}
	n->images[n->nimages++] = img;
	return img;
}

static struct image *image_for(struct namer *n, const char *path)
{
	for (size_t i = 0; i < n->nimages; i++)
		if (strcmp(n->images[i]->path, path) == 0) {
			image_ready(n->images[i]);
			return n->images[i];
		}
	struct image *img = add_image(n, path);
	if (img)
		load_symbols(img);
	return img;
}

static void *load_thread(void *img)
{
	load_symbols(img);
	return NULL;
}

void namer_preload(struct namer *n, const char *path)
{
	struct image *img = add_image(n, path);
	if (!img)
		return;
	img->loading = pthread_create(&img->loader, NULL, load_thread, img) == 0;
	if (!img->loading)
		load_symbols(img);
}

static int is_sync_class(unsigned cls)
{
	return cls == PTT_CLASS_MUTEX || cls == PTT_CLASS_COND || cls == PTT_CLASS_RWLOCK ||
	       cls == PTT_CLASS_BARRIER || cls == PTT_CLASS_SEM || cls == PTT_CLASS_SPIN || cls == PTT_CLASS_FUTEX;
}

struct namer *namer_new(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	struct namer *n = calloc(1, sizeof(struct namer));
	for (unsigned id = 0; n && id < PTT_EV_BUILTIN_COUNT; id++) {
		const struct ptt_type *t = ptt_builtin_type(id);
		if (id == PTT_EV_PROCESS_BEGIN)
			n->look[id] = LOOK_PROCESS;
		else if (id == PTT_EV_MODULE)
			n->look[id] = LOOK_MODULE;
		else if (id == PTT_EV_OBJECT_NAME)
			n->look[id] = LOOK_NAMED;
		else if (t && is_sync_class(t->cls) && t->nargs && t->argkind[0] == PTT_ARG_PTR)
			n->look[id] = LOOK_OBJECT;
	}
	return n;
}

/* 1 if key was new (and is now remembered). */
static int first_sight(struct namer *n, uint64_t key)
{
	if ((n->seen_used + 1) * 2 > n->seen_cap) {
		size_t cap = n->seen_cap ? n->seen_cap * 2 : 1024;
		uint64_t *s = calloc(cap, sizeof *s);
		if (!s)
			return 0;
		for (size_t i = 0; i < n->seen_cap; i++)
			if (n->seen[i]) {
				size_t j = (size_t)(n->seen[i] * 0x9E3779B97F4A7C15ull >> 20) & (cap - 1);
				while (s[j])
					j = (j + 1) & (cap - 1);
				s[j] = n->seen[i];
			}
		free(n->seen);
		n->seen = s;
		n->seen_cap = cap;
	}
	key |= 1; /* never 0 */
	size_t j = (size_t)(key * 0x9E3779B97F4A7C15ull >> 20) & (n->seen_cap - 1);
	while (n->seen[j]) {
		if (n->seen[j] == key)
			return 0;
		j = (j + 1) & (n->seen_cap - 1);
	}
	n->seen[j] = key;
	n->seen_used++;
	return 1;
}

static const char *lookup(struct namer *n, uint32_t pid, uint64_t addr, uint64_t *off)
{
	for (size_t i = 0; i < n->nmods; i++) {
		struct module *m = &n->mods[i];
		if (m->pid != pid || !m->img || !m->img->n)
			continue;
		uint64_t v = m->img->pie ? addr - m->base : addr;
		size_t lo = 0, hi = m->img->n;
		while (lo < hi) { /* last symbol with value <= v */
			size_t mid = (lo + hi) / 2;
			if (m->img->syms[mid].value <= v)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == 0)
			continue;
		const struct sym *s = &m->img->syms[lo - 1];
		if (v < s->value + s->size) {
			*off = v - s->value;
			return m->img->names + s->name;
		}
	}
	return NULL;
}

static void forget_pid(struct namer *n, uint32_t pid)
{
	size_t k = 0;
	for (size_t i = 0; i < n->nmods; i++)
		if (n->mods[i].pid != pid)
			n->mods[k++] = n->mods[i];
	n->nmods = k;
}

static int look_at(struct namer *n, unsigned look, const uint32_t *rec, struct ptt_writer *w);
static int name_object(struct namer *n, const uint32_t *rec, struct ptt_writer *w);

/* Called for every record the recorder writes: the common case (the object
 * of the record before, or a record about none) is a table look-up and a
 * compare, without a call. */
int namer_before(void *ctx, const uint32_t *rec, struct ptt_writer *w)
{
	struct namer *n = ctx;
	unsigned id = ptt_rec_id(rec[0]);
	unsigned look = id < PTT_EV_BUILTIN_COUNT ? n->look[id] : LOOK_NOTHING;
	if (look == LOOK_NOTHING)
		return 0;
	if (look == LOOK_OBJECT && ptt_rec_len(rec[0]) >= 8) {
		uint64_t key = ((uint64_t)rec[6] << 32 | rec[5]) ^ ((uint64_t)rec[3] << 48);
		if (key == n->last_key || n->recent[key >> 3 & 63] == key)
			return 0;
	}
	return look_at(n, look, rec, w);
}

static __attribute__((noinline)) int look_at(struct namer *n, unsigned look, const uint32_t *rec, struct ptt_writer *w)
{
	unsigned len = ptt_rec_len(rec[0]);
	uint32_t pid = rec[3];
	if (look == LOOK_PROCESS) {
		forget_pid(n, pid); /* a new image (exec) or a new process */
		return 0;
	}
	if (look == LOOK_MODULE) {
		if (len <= 8)
			return 0;
		char path[1024];
		size_t bytes = (len - 8) * 4u;
		memcpy(path, rec + 7, bytes < sizeof path ? bytes : sizeof path - 1);
		path[bytes < sizeof path ? bytes : sizeof path - 1] = 0;
		struct module *nm = realloc(n->mods, (n->nmods + 1) * sizeof *nm);
		if (!nm)
			return 0;
		n->mods = nm;
		n->mods[n->nmods].pid = pid;
		n->mods[n->nmods].base = (uint64_t)rec[6] << 32 | rec[5];
		n->mods[n->nmods].img = image_for(n, path);
		n->nmods++;
		return 0;
	}
	uint64_t addr = (uint64_t)rec[6] << 32 | rec[5];
	if (look == LOOK_NAMED) {
		first_sight(n, addr ^ ((uint64_t)pid << 48)); /* the program named it: keep its name */
		return 0;
	}
	if (len < 8)
		return 0;
	uint64_t key = addr ^ ((uint64_t)pid << 48);
	n->last_key = key; /* most records are about the object the previous one was about */
	n->recent[key >> 3 & 63] = key;
	if (!first_sight(n, key))
		return 0;
	return name_object(n, rec, w);
}

/* Write the object_name record of rec's object, when its address has a name. */
static int name_object(struct namer *n, const uint32_t *rec, struct ptt_writer *w)
{
	uint32_t pid = rec[3];
	uint64_t addr = (uint64_t)rec[6] << 32 | rec[5];
	uint64_t off = 0;
	const char *name = lookup(n, pid, addr, &off);
	if (!name)
		return 0;
	struct ptt_event *ev = calloc(1, sizeof *ev);
	if (!ev)
		return 0;
	ev->type = ptt_builtin_type(PTT_EV_OBJECT_NAME);
	ev->id = PTT_EV_OBJECT_NAME;
	ev->ticks = (uint64_t)rec[2] << 32 | rec[1];
	ev->pid = pid;
	ev->tid = rec[4];
	ev->arg[0] = addr;
	char *readable = ptt_demangle(name); /* as written: _ZL2qm -> qm, _ZN4pool4lockE -> pool::lock */
	if (readable)
		name = readable;
	if (off)
		snprintf(ev->str, sizeof ev->str, "%s+%llu", name, (unsigned long long)off);
	else
		snprintf(ev->str, sizeof ev->str, "%s", name);
	free(readable);
	int encoded = ptt_event_encode(ev) == 0;
	int rc = encoded ? ptt_writer_record(w, ev->words, ev->nwords) : 0;
	if (encoded && !rc && n->keeper)
		keeper_see(n->keeper, ev->words);
	free(ev);
	return rc;
}

void namer_free(struct namer *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nimages; i++) {
		image_ready(n->images[i]);
		free(n->images[i]->names);
		free(n->images[i]->syms);
		free(n->images[i]->path);
		free(n->images[i]);
	}
	free(n->images);
	free(n->mods);
	free(n->seen);
	free(n);
}
