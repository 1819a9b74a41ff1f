/* priority.c - see priority.h */
#include "record/priority.h"
#include "util/log.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's struct sched_attr (include/uapi/linux/sched/types.h). */
struct kernel_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
    uint32_t sched_util_min;
    uint32_t sched_util_max;
};

/* The shortest slice the kernel accepts (100 us). */
#define PROFILER_SLICE_NS 100000ULL

void recorder_prefer_latency(void)
{
    struct kernel_sched_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) != 0)
        return;
    if (attr.sched_policy != 0) /* not SCHED_OTHER: leave it as the user set it */
        return;
    attr.size = sizeof(attr);
    attr.sched_runtime = PROFILER_SLICE_NS;
    if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0)
        pt_debug("sched_setattr(slice): %s", strerror(errno));
}
