package main

// maxrssBytes is the unit of syscall.Rusage.Maxrss, in bytes: macOS reports the
// peak resident set size in bytes.
const maxrssBytes = 1
