/*
 * syscall_names.h - the name of an x86_64 system call number.
 *
 * Contract: syscall_name() returns the kernel's name for system call NR on
 * x86_64 ("read", "futex", "clock_nanosleep"...), or NULL for a number
 * that has none (negative, unassigned or newer than the table).  Profiles
 * record raw numbers; the recorder runs on x86_64 only for now.
 */
#ifndef PTPROF_SYMBOL_SYSCALL_NAMES_H
#define PTPROF_SYMBOL_SYSCALL_NAMES_H

const char *syscall_name(int nr);

#endif
