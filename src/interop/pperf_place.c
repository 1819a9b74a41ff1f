/*
 * pperf_place.c - pperf_place_maps() of pperf.h: what each map entry of a
 * raw profile is, and which file offset its address holds.
 *
 * Two writers disagree on the map table.  The original (and ptprof after
 * 0.2.0) wrote one entry per executable mapping: its start, its size and
 * the file's base name (ptprof from 0.2.0 until issue 20 wrote the path
 * instead).  ptprof 0.2.0 and earlier wrote one entry per loaded file: its
 * load base, the size from there to the end of its code, the base name,
 * and an entry for [vdso].  Where the file can be read, its program
 * headers decide: a
 * mapping spans its executable segment's pages, a load runs from the first
 * segment's page to the end of the last executable one.  When both sizes
 * agree (code at file offset 0) the two readings place every PC alike.
 *
 * A mapping starts at its segment's file offset rounded down to a page, as
 * the kernel and ld.so map it; that holds for any linker's layout, where the
 * original's pc - start + p_vaddr is exact only for a page-aligned segment.
 * A mapping that was split (a library that patches a page of its code
 * leaves its segment in two or three pieces) has an entry per piece: pieces
 * of one file that follow each other without a gap are placed as one
 * mapping, where the original's rule misplaces all but the first.
 */
#include "interop/pperf.h"
#include "symbol/binary_finder.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Files that cannot be read are named up to this many, then counted. */
#define MAX_NAMED 10

struct exec_segment {
    uint64_t offset, vaddr, filesz;
};

/* What the map table needs of one file's program headers. */
struct layout {
    bool readable;
    struct exec_segment *exec; /* the executable PT_LOADs, in file order */
    size_t nexec;
    uint64_t first_vaddr; /* the lowest PT_LOAD address */
};

static int read_layout(const char *path, struct layout *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    size_t n = 0;
    int rc = -1;
    if (elf && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &n) == 0) {
        rc = 0;
        out->exec = xcalloc(n ? n : 1, sizeof(*out->exec));
        out->first_vaddr = UINT64_MAX;
        for (size_t i = 0; i < n && rc == 0; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(elf, (int)i, &ph)) {
                rc = -1;
            } else if (ph.p_type == PT_LOAD) {
                if (ph.p_vaddr < out->first_vaddr)
                    out->first_vaddr = ph.p_vaddr;
                if (ph.p_flags & PF_X)
                    out->exec[out->nexec++] =
                        (struct exec_segment){ph.p_offset, ph.p_vaddr, ph.p_filesz};
            }
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    out->readable = rc == 0 && out->nexec > 0;
    return out->readable ? 0 : -1;
}

static uint64_t page_down(uint64_t v, uint64_t page)
{
    return v & ~(page - 1);
}

static uint64_t page_up(uint64_t v, uint64_t page)
{
    return page_down(v + page - 1, page);
}

/* The executable segment whose pages make up SIZE bytes, or NULL. */
static const struct exec_segment *segment_of_size(const struct layout *l, uint64_t size,
                                                  uint64_t page)
{
    for (size_t i = 0; i < l->nexec; i++) {
        const struct exec_segment *s = &l->exec[i];
        if (page_up(s->vaddr + s->filesz, page) - page_down(s->vaddr, page) == size)
            return s;
    }
    return NULL;
}

/* What ptprof 0.2.0 wrote as a load's size: from the page of the first
 * segment to the end of the last executable one. */
static uint64_t load_size(const struct layout *l, uint64_t page)
{
    uint64_t end = 0;
    for (size_t i = 0; i < l->nexec; i++) {
        uint64_t e = page_up(l->exec[i].vaddr + l->exec[i].filesz, page);
        end = e > end ? e : end;
    }
    return end - page_down(l->first_vaddr, page);
}

/* One per distinct label: looked up when first needed, warned about once. */
struct labelled_file {
    const char *label;
    bool looked_up;
    bool warned;
    struct layout layout;
};

struct label_ref {
    const char *label;
    uint32_t entry;
};

static int by_label(const void *a, const void *b)
{
    const struct label_ref *x = a, *y = b;
    int c = strcmp(x->label, y->label);
    return c ? c : (x->entry > y->entry) - (x->entry < y->entry);
}

/* FILES gets one element per distinct label (sorting keeps a table of
 * many entries cheap), and FILE_OF[i] says which is entry I's. */
static size_t group_labels(const struct pperf_profile *in, struct labelled_file *files,
                           uint32_t *file_of)
{
    struct label_ref *refs = xcalloc(in->nmaps ? in->nmaps : 1, sizeof(*refs));
    for (uint32_t i = 0; i < in->nmaps; i++)
        refs[i] = (struct label_ref){in->maps[i].label, i};
    qsort(refs, in->nmaps, sizeof(*refs), by_label);
    size_t n = 0;
    for (uint32_t i = 0; i < in->nmaps; i++) {
        if (i == 0 || strcmp(refs[i].label, refs[i - 1].label) != 0)
            files[n++] = (struct labelled_file){.label = refs[i].label};
        file_of[refs[i].entry] = (uint32_t)(n - 1);
    }
    free(refs);
    return n;
}

/* The file's layout, found as the symbolizer finds it: a file the user
 * named, else the search (binary_finder.h). */
static const struct layout *layout_of(struct labelled_file *f, struct binary_finder *finder)
{
    if (!f->looked_up) {
        f->looked_up = true;
        const char *given = binary_finder_given(finder, f->label);
        struct bf_result found = {.status = BF_MISSING};
        if (!given)
            binary_finder_find(finder, f->label, NULL, 0, &found);
        if (given || found.status == BF_FOUND)
            read_layout(given ? given : found.path, &f->layout);
        free(found.path);
    }
    return &f->layout;
}

/* Entries I and I+1 are pieces of one mapping: the same file, end to
 * start (a mapping splits when part of it changes, as when a library
 * patches a page of its code). */
static bool continues(const struct pperf_map *maps, uint32_t i)
{
    return maps[i].address + maps[i].size == maps[i + 1].address &&
           strcmp(maps[i].label, maps[i + 1].label) == 0;
}

/* [START, END) of the run of pieces that holds each entry, in two passes. */
static void runs_of(const struct pperf_profile *in, uint64_t *start, uint64_t *end)
{
    for (uint32_t i = 0; i < in->nmaps; i++)
        start[i] = i > 0 && continues(in->maps, i - 1) ? start[i - 1] : in->maps[i].address;
    for (uint32_t i = in->nmaps; i-- > 0;)
        end[i] = i + 1 < in->nmaps && continues(in->maps, i)
                     ? end[i + 1]
                     : in->maps[i].address + in->maps[i].size;
}

void pperf_place_maps(const char *name, const struct pperf_profile *in,
                      struct binary_finder *finder, struct pperf_place *out)
{
    const long pagesize = sysconf(_SC_PAGESIZE);
    const uint64_t page = pagesize > 0 ? (uint64_t)pagesize : 4096;
    struct labelled_file *files = xcalloc(in->nmaps ? in->nmaps : 1, sizeof(*files));
    uint32_t *file_of = xcalloc(in->nmaps ? in->nmaps : 1, sizeof(*file_of));
    size_t nfiles = group_labels(in, files, file_of);
    size_t unreadable = 0;
    uint64_t *run_start = xcalloc(in->nmaps ? in->nmaps : 1, 2 * sizeof(*run_start));
    uint64_t *run_end = run_start + in->nmaps;
    runs_of(in, run_start, run_end);
    bool legacy_table = false; /* ptprof 0.2.0 listed [vdso]; nobody else lists brackets */
    for (uint32_t i = 0; i < in->nmaps; i++)
        legacy_table = legacy_table || in->maps[i].label[0] == '[';

    for (uint32_t i = 0; i < in->nmaps; i++) {
        const struct pperf_map *m = &in->maps[i];

        /* Without the file: a path is ptprof's mapping entry, a base name
         * the original's, unless the table has ptprof 0.2.0's [vdso]. */
        const enum pperf_entry_form labelled =
            m->label[0] == '/' || !legacy_table ? PPERF_ENTRY_MAPPING : PPERF_ENTRY_LOAD;
        out[i] = (struct pperf_place){.form = labelled, .offset = 0};
        if (m->label[0] == '\0' || m->label[0] == '[')
            continue; /* ptprof 0.2.0's [vdso]: a pseudo file at its load base */

        struct labelled_file *f = &files[file_of[i]];
        const struct layout *l = layout_of(f, finder);
        if (!l->readable) {
            if (labelled == PPERF_ENTRY_MAPPING && !f->warned && ++unreadable <= MAX_NAMED)
                pt_warn("%s: map %" PRIu32 ": cannot read the executable segments of %s (not "
                        "found in the search directories, next to the profile, at that path "
                        "or in the library directories: add -s DIR or --binary PATH), so its "
                        "PCs cannot be placed in it",
                        name, i, m->label);
            f->warned = true;
            continue;
        }
        const struct exec_segment *seg = segment_of_size(l, run_end[i] - run_start[i], page);
        bool load_fits = load_size(l, page) == m->size;
        if (seg && !load_fits)
            out[i].form = PPERF_ENTRY_MAPPING;
        else if (load_fits && !seg)
            out[i].form = PPERF_ENTRY_LOAD;
        else if (!seg && !load_fits && !f->warned)
            pt_warn("%s: map %" PRIu32 ": its size 0x%" PRIx64 " fits neither an executable "
                    "segment of %s nor its whole code: is it another build of that file?",
                    name, i, m->size, m->label);
        f->warned = f->warned || (!seg && !load_fits);
        if (out[i].form == PPERF_ENTRY_MAPPING)
            out[i].offset = page_down(seg ? seg->offset : l->exec[0].offset, page) +
                            (m->address - run_start[i]);
    }
    if (unreadable > MAX_NAMED)
        pt_warn("%s: and %zu more files of map entries cannot be read", name,
                unreadable - MAX_NAMED);
    for (size_t i = 0; i < nfiles; i++)
        free(files[i].layout.exec);
    free(files);
    free(file_of);
    free(run_start);
}
