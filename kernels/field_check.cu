// gpu-selftest's check of the field operations (goldilocks.cuh) against the CPU field
// (src/field.rs) on edge words: for each pair i, out[3i .. 3i+3] = a + b, a - b (of a and b
// reduced below P, as those two require) and a·b (of the words as they are: gl_mul takes any).

extern "C" __global__ void field_ops(const u64* a, const u64* b, u64* out, u32 n) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const u64 ca = a[i] >= GL_P ? a[i] - GL_P : a[i], cb = b[i] >= GL_P ? b[i] - GL_P : b[i];
    out[3 * i] = gl_add(ca, cb);
    out[3 * i + 1] = gl_sub(ca, cb);
    out[3 * i + 2] = gl_mul(a[i], b[i]);
}
