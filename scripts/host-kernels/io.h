// What the host harnesses share to read their IN (exact sizes, or exit 2) and write their OUT.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <errno.h>
#include <vector>

static FILE* in;
static void get(void* p, size_t bytes) {
    if (fread(p, 1, bytes, in) != bytes) {
        fprintf(stderr, "%s: input too short\n", program_invocation_short_name);
        exit(2);
    }
}
template <class T> static T one() {
    T v;
    get(&v, sizeof v);
    return v;
}
template <class T> static std::vector<T> many(size_t count) {
    std::vector<T> v(count);
    get(v.data(), count * sizeof(T));
    return v;
}
template <class T> static void put(FILE* o, const std::vector<T>& v) { fwrite(v.data(), sizeof(T), v.size(), o); }
