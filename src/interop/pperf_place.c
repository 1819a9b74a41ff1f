/*
 * pperf_place.c - pperf_place_maps() of pperf.h: what each map entry of a
 * raw profile is, and which file offset its address holds.
 *
 * Two writers disagree on the map table.  The original (and ptprof after
 * 0.2.0) wrote one entry per executable mapping: its start, its size and
 * the file's path.  ptprof 0.2.0 and earlier wrote one entry per loaded
 * file: its load base, the size from there to the end of its code, and the
 * base name.  Where the file can be read, its program headers decide: a
 * mapping spans its executable segment's pages, a load runs from the first
 * segment's page to the end of the last executable one.  When both sizes
 * agree (code at file offset 0) the two readings place every PC alike.
 *
 * A mapping starts at its segment's file offset rounded down to a page, as
 * the kernel and ld.so map it; that holds for any linker's layout, where the
 * original's pc - start + p_vaddr is exact only for a page-aligned segment.
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

/* One per distinct label: looked up and warned about once. */
struct labelled_file {
    const char *label;
    struct layout layout;
    bool warned;
};

static struct labelled_file *file_of(struct labelled_file *files, size_t *nfiles,
                                     struct binary_finder *finder, const char *label)
{
    for (size_t i = 0; i < *nfiles; i++)
        if (strcmp(files[i].label, label) == 0)
            return &files[i];
    struct labelled_file *f = &files[(*nfiles)++];
    *f = (struct labelled_file){.label = label};
    struct bf_result found;
    binary_finder_find(finder, label, NULL, 0, &found);
    if (found.status == BF_FOUND)
        read_layout(found.path, &f->layout);
    free(found.path);
    return f;
}

void pperf_place_maps(const char *name, const struct pperf_profile *in, const char *const *dirs,
                      size_t ndirs, struct pperf_place *out)
{
    const long pagesize = sysconf(_SC_PAGESIZE);
    const uint64_t page = pagesize > 0 ? (uint64_t)pagesize : 4096;
    struct binary_finder *finder = binary_finder_new(dirs, ndirs);
    struct labelled_file *files = xcalloc(in->nmaps ? in->nmaps : 1, sizeof(*files));
    size_t nfiles = 0;

    for (uint32_t i = 0; i < in->nmaps; i++) {
        const struct pperf_map *m = &in->maps[i];
        /* The original's labels are paths as /proc/PID/maps gives them. */
        const enum pperf_entry_form by_label =
            m->label[0] == '/' ? PPERF_ENTRY_MAPPING : PPERF_ENTRY_LOAD;
        out[i] = (struct pperf_place){.form = by_label, .offset = 0};
        if (m->label[0] == '\0' || m->label[0] == '[')
            continue; /* ptprof 0.2.0's [vdso]: a pseudo file at its load base */

        struct labelled_file *f = file_of(files, &nfiles, finder, m->label);
        const struct layout *l = &f->layout;
        if (!l->readable) {
            if (by_label == PPERF_ENTRY_MAPPING && !f->warned)
                pt_warn("%s: map %" PRIu32 ": cannot read the executable segments of %s (not "
                        "found at that path, next to the profile or in the library "
                        "directories), so its PCs cannot be placed in it",
                        name, i, m->label);
            f->warned = true;
            continue;
        }
        const struct exec_segment *seg = segment_of_size(l, m->size, page);
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
            out[i].offset = page_down(seg ? seg->offset : l->exec[0].offset, page);
    }
    for (size_t i = 0; i < nfiles; i++)
        free(files[i].layout.exec);
    free(files);
    binary_finder_free(finder);
}
