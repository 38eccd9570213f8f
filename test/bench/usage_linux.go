package main

// maxrssBytes is the unit of syscall.Rusage.Maxrss, in bytes: Linux reports the
// peak resident set size in KiB.
const maxrssBytes = 1024
