/* version.h - the version ptprof reports and stamps into its profiles. */
#ifndef PTPROF_UTIL_VERSION_H
#define PTPROF_UTIL_VERSION_H

#define PTPROF_VERSION "0.2.0"

#endif
