/*
 * demangle.h - C++ symbol names made readable.
 *
 * Contract: demangle() returns the demangled form of an Itanium C++ ABI
 * name ("_ZN2ns5Klass6methodEi" -> "ns::Klass::method(int)"), allocated,
 * or NULL when NAME is not one (C names, garbage, NULL).  It uses
 * libstdc++'s __cxa_demangle, which also understands GCC's clone suffixes
 * ("_Z3fooi.cold" -> "foo(int) [clone .cold]").
 */
#ifndef PTPROF_SYMBOL_DEMANGLE_H
#define PTPROF_SYMBOL_DEMANGLE_H

char *demangle(const char *name);

#endif
