/* The calling thread's floating-point control word, for torch.set_flush_denormal: flush
   denormal results to zero and read denormal inputs as zero (MXCSR's FTZ and DAZ bits on
   x86-64, FPCR's FZ bit on AArch64). Returns 1 where the CPU has the switch, else 0. */

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>

int ember_set_flush_denormal(int on) {
    unsigned int csr = _mm_getcsr();
    const unsigned int ftz_daz = 0x8000u | 0x0040u;
    _mm_setcsr(on ? (csr | ftz_daz) : (csr & ~ftz_daz));
    return 1;
}
#elif defined(__aarch64__)
#include <stdint.h>

int ember_set_flush_denormal(int on) {
    uint64_t fpcr;
    const uint64_t fz = (uint64_t)1 << 24;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    fpcr = on ? (fpcr | fz) : (fpcr & ~fz);
    __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr));
    return 1;
}
#else
int ember_set_flush_denormal(int on) {
    (void)on;
    return 0;
}
#endif
