//go:build !purego

#include "textflag.h"

// func dotQ16AVX2(q *int16, c *int8, n int) int32
//
// Σ q[i]·c[i] for int16 query weights and int8 codes. The codes are
// sign-extended 16 at a time to int16 (VPMOVSXBW), multiplied by the query
// and adjacent pairs summed into int32 lanes (VPMADDWD), in four
// independent accumulators (64 codes per iteration); the tail runs one
// element at a time. The caller keeps |q| ≤ 2047, so a pair is at most
// 2^19, and n ≤ 2^13, so the int32 total (and every lane) cannot overflow.
TEXT ·dotQ16AVX2(SB), NOSPLIT, $0-28
	MOVQ q+0(FP), SI
	MOVQ c+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y5, Y5, Y5
	VPXOR Y7, Y7, Y7
	XORQ  DX, DX

loop64:
	CMPQ      CX, $64
	JL        loop16
	VPMOVSXBW (DI), Y2
	VPMADDWD  (SI), Y2, Y2
	VPADDD    Y2, Y0, Y0
	VPMOVSXBW 16(DI), Y3
	VPMADDWD  32(SI), Y3, Y3
	VPADDD    Y3, Y1, Y1
	VPMOVSXBW 32(DI), Y4
	VPMADDWD  64(SI), Y4, Y4
	VPADDD    Y4, Y5, Y5
	VPMOVSXBW 48(DI), Y6
	VPMADDWD  96(SI), Y6, Y6
	VPADDD    Y6, Y7, Y7
	ADDQ      $64, DI
	ADDQ      $128, SI
	SUBQ      $64, CX
	JMP       loop64

loop16:
	CMPQ      CX, $16
	JL        tail
	VPMOVSXBW (DI), Y2
	VPMADDWD  (SI), Y2, Y2
	VPADDD    Y2, Y0, Y0
	ADDQ      $16, DI
	ADDQ      $32, SI
	SUBQ      $16, CX
	JMP       loop16

tail:
	TESTQ   CX, CX
	JE      reduce
	MOVWQSX (SI), AX
	MOVBQSX (DI), BX
	IMULQ   BX, AX
	ADDQ    AX, DX
	ADDQ    $2, SI
	INCQ    DI
	DECQ    CX
	JMP     tail

reduce:
	VPADDD       Y1, Y0, Y0
	VPADDD       Y7, Y5, Y5
	VPADDD       Y5, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	ADDL         DX, AX
	VZEROUPPER
	MOVL         AX, ret+24(FP)
	RET

// tailMask holds eight all-ones words then eight zeros: the 32 bytes at
// tailMask + 4·(8−m) select the first m (1–7) of eight components, so the
// last, short step of a dot product loads zeros past the end (VMASKMOVPS
// neither reads nor faults there).
DATA tailMask<>+0(SB)/8, $0xffffffffffffffff
DATA tailMask<>+8(SB)/8, $0xffffffffffffffff
DATA tailMask<>+16(SB)/8, $0xffffffffffffffff
DATA tailMask<>+24(SB)/8, $0xffffffffffffffff
DATA tailMask<>+32(SB)/8, $0
DATA tailMask<>+40(SB)/8, $0
DATA tailMask<>+48(SB)/8, $0
DATA tailMask<>+56(SB)/8, $0
GLOBL tailMask<>(SB), RODATA|NOPTR, $64

// The float32 kernels below all sum a dot product of dim components in
// one order, the one dotGo (dot.go) defines: eight lanes, lane j summing
// the components i ≡ j (mod 8) in ascending i by fused multiply-add from
// +0 (a short last step adds zeros for the missing components), then
// ((s0+s1)+(s2+s3)) + ((s4+s5)+(s6+s7)). The lane sums of four dot
// products A–D reduce side by side: VHADDPS(A,B) and VHADDPS(C,D) give
// each lane pair's sum, VHADDPS of those the sums of four per 128-bit
// half, and adding the two halves the four scores in one register.

// DOT_SETUP(dimArg) sets DX to the bytes of the whole eight-component
// steps of a row, R14 to the bytes of a row, and DI to the tail mask for
// the dim mod 8 components left over (0 when none are).
#define DOT_SETUP(dimArg) \
	MOVQ dimArg, DX; \
	MOVQ DX, R14; \
	SHLQ $2, R14; \
	MOVQ DX, AX; \
	ANDQ $7, AX; \
	XORQ CX, CX; \
	LEAQ tailMask<>+32(SB), DI; \
	NEGQ AX; \
	LEAQ (DI)(AX*4), DI; \
	CMOVQEQ CX, DI; \
	ANDQ $-8, DX; \
	SHLQ $2, DX

// REDUCE4(a, b, c, d, xa, xb) leaves the four scores of the lane sums in
// a, b, c, d in xa (a's low half), using b's low half xb as scratch.
#define REDUCE4(a, b, c, d, xa, xb) \
	VHADDPS b, a, a; \
	VHADDPS d, c, c; \
	VHADDPS c, a, a; \
	VEXTRACTF128 $1, a, xb; \
	VADDPS xb, xa, xa

// STORE4(out, x) stores the four scores in x at the pointer in argument
// out and advances it past them.
#define STORE4(out, x) \
	MOVQ    out, AX; \
	VMOVUPS x, (AX); \
	ADDQ    $16, AX; \
	MOVQ    AX, out

// ROWS4 points R11–R13 at the three rows after the one at SI.
#define ROWS4 \
	LEAQ (SI)(R14*1), R11; \
	LEAQ (R11)(R14*1), R12; \
	LEAQ (R12)(R14*1), R13

// ZERO12 clears the twelve accumulators Y0–Y11.
#define ZERO12 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

// STEP3x4: one eight-component step of three queries (R8–R10, in
// Y12–Y14) against four rows (SI, R11–R13, each in Y15 in turn) at byte
// offset CX: seven loads for twelve FMAs, the sums of query k and row r
// in Y(4k+r).
#define STEP3x4 \
	VMOVUPS (R8)(CX*1), Y12; \
	VMOVUPS (R9)(CX*1), Y13; \
	VMOVUPS (R10)(CX*1), Y14; \
	VMOVUPS (SI)(CX*1), Y15; \
	VFMADD231PS Y15, Y12, Y0; \
	VFMADD231PS Y15, Y13, Y4; \
	VFMADD231PS Y15, Y14, Y8; \
	VMOVUPS (R11)(CX*1), Y15; \
	VFMADD231PS Y15, Y12, Y1; \
	VFMADD231PS Y15, Y13, Y5; \
	VFMADD231PS Y15, Y14, Y9; \
	VMOVUPS (R12)(CX*1), Y15; \
	VFMADD231PS Y15, Y12, Y2; \
	VFMADD231PS Y15, Y13, Y6; \
	VFMADD231PS Y15, Y14, Y10; \
	VMOVUPS (R13)(CX*1), Y15; \
	VFMADD231PS Y15, Y12, Y3; \
	VFMADD231PS Y15, Y13, Y7; \
	VFMADD231PS Y15, Y14, Y11

// TAIL3x4: the short last step of STEP3x4, under the mask in Y12.
#define TAIL3x4 \
	VMASKMOVPS (R8)(CX*1), Y12, Y13; \
	VMASKMOVPS (SI)(CX*1), Y12, Y14; \
	VFMADD231PS Y14, Y13, Y0; \
	VMASKMOVPS (R11)(CX*1), Y12, Y14; \
	VFMADD231PS Y14, Y13, Y1; \
	VMASKMOVPS (R12)(CX*1), Y12, Y14; \
	VFMADD231PS Y14, Y13, Y2; \
	VMASKMOVPS (R13)(CX*1), Y12, Y14; \
	VFMADD231PS Y14, Y13, Y3; \
	VMASKMOVPS (R9)(CX*1), Y12, Y13; \
	VMASKMOVPS (SI)(CX*1), Y12, Y14; \
	VFMADD231PS Y14, Y13, Y4; \
	VMASKMOVPS (R11)(CX*1), Y12, Y14; \
	VFMADD231PS Y14, Y13, Y5; \
	VMASKMOVPS (R12)(CX*1), Y12, Y14; \
	VFMADD231PS Y14, Y13, Y6; \
	VMASKMOVPS (R13)(CX*1), Y12, Y14; \
	VFMADD231PS Y14, Y13, Y7; \
	VMASKMOVPS (R10)(CX*1), Y12, Y13; \
	VMASKMOVPS (SI)(CX*1), Y12, Y14; \
	VFMADD231PS Y14, Y13, Y8; \
	VMASKMOVPS (R11)(CX*1), Y12, Y14; \
	VFMADD231PS Y14, Y13, Y9; \
	VMASKMOVPS (R12)(CX*1), Y12, Y14; \
	VFMADD231PS Y14, Y13, Y10; \
	VMASKMOVPS (R13)(CX*1), Y12, Y14; \
	VFMADD231PS Y14, Y13, Y11

// func dot3x4AVX2(q0, q1, q2, rows *float32, dim, n int, out0, out1, out2 *float32)
//
// Scores three queries against n rows (a multiple of four, dim apart)
// four at a time: out_k[r] = q_k · row r, in the order described above.
// Twelve accumulators (Y0–Y11) hold one (query, row) pair each, so the
// loop is bound by the FMA units, not by loads or reductions; the rows are
// read where they are, with no rearranging copy.
TEXT ·dot3x4AVX2(SB), NOSPLIT, $0-72
	MOVQ q0+0(FP), R8
	MOVQ q1+8(FP), R9
	MOVQ q2+16(FP), R10
	MOVQ rows+24(FP), SI
	DOT_SETUP(dim+32(FP))
	MOVQ n+40(FP), BX
	SHRQ $2, BX
	JE   d34done

d34tile:
	ROWS4
	ZERO12
	XORQ CX, CX
	TESTQ DX, DX
	JE   d34tail

d34loop:
	STEP3x4
	ADDQ $32, CX
	CMPQ CX, DX
	JNE  d34loop

d34tail:
	TESTQ DI, DI
	JE   d34reduce
	VMOVUPS (DI), Y12
	TAIL3x4

d34reduce:
	REDUCE4(Y0, Y1, Y2, Y3, X0, X1)
	STORE4(out0+48(FP), X0)
	REDUCE4(Y4, Y5, Y6, Y7, X4, X5)
	STORE4(out1+56(FP), X4)
	REDUCE4(Y8, Y9, Y10, Y11, X8, X9)
	STORE4(out2+64(FP), X8)
	LEAQ (R13)(R14*1), SI
	DECQ BX
	JNE  d34tile

d34done:
	VZEROUPPER
	RET

// func dot1x4AVX2(q, rows *float32, dim, n int, out *float32)
//
// Scores one query against n rows (a multiple of four, dim apart), four
// at a time, in the same order: out[r] = q · row r.
TEXT ·dot1x4AVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), R8
	MOVQ rows+8(FP), SI
	DOT_SETUP(dim+16(FP))
	MOVQ n+24(FP), BX
	MOVQ out+32(FP), R9
	SHRQ $2, BX
	JE   d14done

d14tile:
	ROWS4
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ CX, CX
	TESTQ DX, DX
	JE   d14tail

d14loop:
	VMOVUPS (R8)(CX*1), Y12
	VFMADD231PS (SI)(CX*1), Y12, Y0
	VFMADD231PS (R11)(CX*1), Y12, Y1
	VFMADD231PS (R12)(CX*1), Y12, Y2
	VFMADD231PS (R13)(CX*1), Y12, Y3
	ADDQ $32, CX
	CMPQ CX, DX
	JNE  d14loop

d14tail:
	TESTQ DI, DI
	JE   d14reduce
	VMOVUPS (DI), Y12
	VMASKMOVPS (R8)(CX*1), Y12, Y13
	VMASKMOVPS (SI)(CX*1), Y12, Y14
	VFMADD231PS Y14, Y13, Y0
	VMASKMOVPS (R11)(CX*1), Y12, Y14
	VFMADD231PS Y14, Y13, Y1
	VMASKMOVPS (R12)(CX*1), Y12, Y14
	VFMADD231PS Y14, Y13, Y2
	VMASKMOVPS (R13)(CX*1), Y12, Y14
	VFMADD231PS Y14, Y13, Y3

d14reduce:
	REDUCE4(Y0, Y1, Y2, Y3, X0, X1)
	VMOVUPS X0, (R9)
	ADDQ $16, R9
	LEAQ (R13)(R14*1), SI
	DECQ BX
	JNE  d14tile

d14done:
	VZEROUPPER
	RET

// func dot1AVX2(q, r *float32, dim int) float32
//
// One dot product in the same order: one accumulator, reduced by the
// same additions (VHADDPS of it with itself twice gives each half's sum
// of four in its first lane).
TEXT ·dot1AVX2(SB), NOSPLIT, $0-28
	MOVQ q+0(FP), R8
	MOVQ r+8(FP), SI
	DOT_SETUP(dim+16(FP))
	VXORPS Y0, Y0, Y0
	XORQ CX, CX
	TESTQ DX, DX
	JE   d1tail

d1loop:
	VMOVUPS (R8)(CX*1), Y12
	VFMADD231PS (SI)(CX*1), Y12, Y0
	ADDQ $32, CX
	CMPQ CX, DX
	JNE  d1loop

d1tail:
	TESTQ DI, DI
	JE   d1reduce
	VMOVUPS (DI), Y12
	VMASKMOVPS (R8)(CX*1), Y12, Y13
	VMASKMOVPS (SI)(CX*1), Y12, Y14
	VFMADD231PS Y14, Y13, Y0

d1reduce:
	VHADDPS Y0, Y0, Y0
	VHADDPS Y0, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDSS X1, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// STEP6x2: one eight-component step of six queries (R8–R10, R12, R13,
// BX, each in Y14 in turn) against two rows (SI and R11, in Y12 and Y13)
// at byte offset CX: eight loads for twelve FMAs, only two of them from
// the rows, the sums of query k and row r in Y(2k+r).
#define STEP6x2 \
	VMOVUPS (SI)(CX*1), Y12; \
	VMOVUPS (R11)(CX*1), Y13; \
	VMOVUPS (R8)(CX*1), Y14; \
	VFMADD231PS Y12, Y14, Y0; \
	VFMADD231PS Y13, Y14, Y1; \
	VMOVUPS (R9)(CX*1), Y14; \
	VFMADD231PS Y12, Y14, Y2; \
	VFMADD231PS Y13, Y14, Y3; \
	VMOVUPS (R10)(CX*1), Y14; \
	VFMADD231PS Y12, Y14, Y4; \
	VFMADD231PS Y13, Y14, Y5; \
	VMOVUPS (R12)(CX*1), Y14; \
	VFMADD231PS Y12, Y14, Y6; \
	VFMADD231PS Y13, Y14, Y7; \
	VMOVUPS (R13)(CX*1), Y14; \
	VFMADD231PS Y12, Y14, Y8; \
	VFMADD231PS Y13, Y14, Y9; \
	VMOVUPS (BX)(CX*1), Y14; \
	VFMADD231PS Y12, Y14, Y10; \
	VFMADD231PS Y13, Y14, Y11

// TAIL6x2: the short last step of STEP6x2, under the mask in Y15.
#define TAIL6x2 \
	VMASKMOVPS (SI)(CX*1), Y15, Y12; \
	VMASKMOVPS (R11)(CX*1), Y15, Y13; \
	VMASKMOVPS (R8)(CX*1), Y15, Y14; \
	VFMADD231PS Y12, Y14, Y0; \
	VFMADD231PS Y13, Y14, Y1; \
	VMASKMOVPS (R9)(CX*1), Y15, Y14; \
	VFMADD231PS Y12, Y14, Y2; \
	VFMADD231PS Y13, Y14, Y3; \
	VMASKMOVPS (R10)(CX*1), Y15, Y14; \
	VFMADD231PS Y12, Y14, Y4; \
	VFMADD231PS Y13, Y14, Y5; \
	VMASKMOVPS (R12)(CX*1), Y15, Y14; \
	VFMADD231PS Y12, Y14, Y6; \
	VFMADD231PS Y13, Y14, Y7; \
	VMASKMOVPS (R13)(CX*1), Y15, Y14; \
	VFMADD231PS Y12, Y14, Y8; \
	VFMADD231PS Y13, Y14, Y9; \
	VMASKMOVPS (BX)(CX*1), Y15, Y14; \
	VFMADD231PS Y12, Y14, Y10; \
	VFMADD231PS Y13, Y14, Y11

// REDUCE2(a, xa, b, xb) leaves the scores of the lane sums in a and b in
// the first two lanes of xa: VHADDPS(a,b), then VHADDPS of that with
// itself, then the two halves added (the same additions as REDUCE4).
#define REDUCE2(a, xa, b, xb) \
	VHADDPS b, a, a; \
	VHADDPS a, a, a; \
	VEXTRACTF128 $1, a, xb; \
	VADDPS xb, xa, xa

// func dot6x2AVX2(q, rows *float32, dim, n int, out *float32, ostride int, pf *float32, pfLines, pfFrom int)
//
// Scores six queries (one after another from q, dim apart) against n rows
// (a multiple of two, dim apart) two at a time, in the same order: query
// k's score for row r goes to out + k·ostride bytes, float r. Each step
// loads two row vectors, where three queries × four rows load four: when
// the rows stream from L2 (a scan chunk) and the queries sit in L1, that
// halves what the loop asks of L2. The tail mask pointer lives in the
// frame.
//
// From tile pfFrom on (counting from 0), each tile with a whole tile's
// steps of the pfLines cache lines at pf still to fetch also prefetches
// one of them per step: the caller passes the queries it scores next,
// which would otherwise come from L3 with few misses in flight when
// their first tile starts. Scores do not depend on it.
TEXT ·dot6x2AVX2(SB), NOSPLIT, $8-72
	MOVQ q+0(FP), R8
	MOVQ rows+8(FP), SI
	DOT_SETUP(dim+16(FP))
	MOVQ DI, mask-8(SP)
	LEAQ (R8)(R14*1), R9
	LEAQ (R9)(R14*1), R10
	LEAQ (R10)(R14*1), R12
	LEAQ (R12)(R14*1), R13
	LEAQ (R13)(R14*1), BX
	MOVQ n+24(FP), AX
	SHRQ $1, AX
	MOVQ AX, n+24(FP)
	JE   d62done

d62tile:
	LEAQ (SI)(R14*1), R11
	ZERO12
	XORQ CX, CX
	TESTQ DX, DX
	JE   d62tail
	CMPQ pfFrom+64(FP), $0
	JE   d62pfcheck
	DECQ pfFrom+64(FP)
	JMP  d62loop

d62pfcheck:
	MOVQ DX, AX
	SHRQ $5, AX
	CMPQ pfLines+56(FP), AX
	JL   d62loop
	SUBQ AX, pfLines+56(FP)
	MOVQ pf+48(FP), DI

d62pfloop:
	PREFETCHT0 (DI)
	ADDQ $64, DI
	STEP6x2
	ADDQ $32, CX
	CMPQ CX, DX
	JNE  d62pfloop
	MOVQ DI, pf+48(FP)
	JMP  d62tail

d62loop:
	STEP6x2
	ADDQ $32, CX
	CMPQ CX, DX
	JNE  d62loop

d62tail:
	MOVQ mask-8(SP), DI
	TESTQ DI, DI
	JE   d62reduce
	VMOVUPS (DI), Y15
	TAIL6x2

d62reduce:
	// Query k's two scores go to out + k·ostride: AX = out, DI = ostride,
	// CX (free until the next tile) for the odd multiples.
	MOVQ out+32(FP), AX
	MOVQ ostride+40(FP), DI
	REDUCE2(Y0, X0, Y1, X1)
	VMOVSD X0, (AX)
	REDUCE2(Y2, X2, Y3, X3)
	VMOVSD X2, (AX)(DI*1)
	REDUCE2(Y4, X4, Y5, X5)
	VMOVSD X4, (AX)(DI*2)
	LEAQ (AX)(DI*2), CX
	REDUCE2(Y6, X6, Y7, X7)
	VMOVSD X6, (CX)(DI*1)
	REDUCE2(Y8, X8, Y9, X9)
	VMOVSD X8, (AX)(DI*4)
	LEAQ (AX)(DI*4), CX
	REDUCE2(Y10, X10, Y11, X11)
	VMOVSD X10, (CX)(DI*1)
	ADDQ $8, AX
	MOVQ AX, out+32(FP)
	LEAQ (R11)(R14*1), SI
	DECQ n+24(FP)
	JNE  d62tile

d62done:
	VZEROUPPER
	RET

// func notBelowMaskAVX2(s *float32, n int, bar float32) uint64
//
// A mask with bit i set when s[i] is not below bar, !(s[i] < bar) as Go
// compares, for s[0..n) (n a multiple of 8, at most 64): eight at a time
// by VCMPPS (NGT_US on bar, s: true unless bar > s[i], so NaN counts as
// not below) and VMOVMSKPS, shifted into place.
TEXT ·notBelowMaskAVX2(SB), NOSPLIT, $0-32
	MOVQ         s+0(FP), SI
	MOVQ         n+8(FP), DX
	VBROADCASTSS bar+16(FP), Y1
	XORQ         AX, AX
	XORQ         CX, CX

nbmloop:
	VCMPPS    $0x0A, (SI)(CX*4), Y1, Y0
	VMOVMSKPS Y0, BX
	SHLQ      CX, BX
	ORQ       BX, AX
	ADDQ      $8, CX
	CMPQ      CX, DX
	JL        nbmloop
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

// func notBelow6AVX2(s *[6]*float32, n int, bars *[6]float32) int
//
// A mask with bit k set when some of s[k][0..n) (n a multiple of 8, > 0)
// is not below bars[k], as notBelowMaskAVX2 compares: the top-k's
// threshold test for a six-query batch in one call.
TEXT ·notBelow6AVX2(SB), NOSPLIT, $0-32
	MOVQ s+0(FP), R8
	MOVQ n+8(FP), DX
	MOVQ bars+16(FP), R9
	XORQ AX, AX
	XORQ BX, BX

nb6query:
	MOVQ         (R8)(BX*8), SI
	VBROADCASTSS (R9)(BX*4), Y1
	VXORPS       Y0, Y0, Y0
	XORQ         CX, CX

nb6loop:
	VCMPPS $0x0A, (SI)(CX*4), Y1, Y2
	VORPS  Y2, Y0, Y0
	ADDQ   $8, CX
	CMPQ   CX, DX
	JL     nb6loop
	VMOVMSKPS Y0, DI
	TESTL     DI, DI
	JE        nb6next
	BTSQ      BX, AX

nb6next:
	INCQ BX
	CMPQ BX, $6
	JL   nb6query
	VZEROUPPER
	MOVQ AX, ret+24(FP)
	RET

