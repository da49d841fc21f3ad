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

// func dot3RowsAVX2(q0, q1, q2, rows *float32, dim, n int, out0, out1, out2 *float32)
//
// Scores three queries against n consecutive rows of dim float32 each:
// out_k[r] = q_k · rows[r]. Each (query, row) pair is summed exactly as
// vek's Dot_AVX2_F32 sums it — four 8-lane FMA accumulators over 32
// elements per step, reduced as ((a0+a1)+a2)+a3, then high half + low
// half, then the 64-bit halves, then the two lanes, then the remaining
// dim mod 32 elements by scalar FMA in order (all of them when dim < 32)
// — so every score is bit-identical to vek32.Dot's, while each row is
// loaded once for three queries: 12 accumulators in Y0–Y11, the row's 32
// elements in Y12–Y15, the queries read from L1 as memory operands.
TEXT ·dot3RowsAVX2(SB), NOSPLIT, $0-72
	MOVQ q0+0(FP), R8
	MOVQ q1+8(FP), R9
	MOVQ q2+16(FP), R10
	MOVQ rows+24(FP), SI
	MOVQ dim+32(FP), DX
	MOVQ n+40(FP), BX
	MOVQ out0+48(FP), R11
	MOVQ out1+56(FP), R12
	MOVQ out2+64(FP), R13
	MOVQ DX, AX
	ANDQ $-32, AX
	MOVQ DX, R14
	SHLQ $2, R14
	TESTQ BX, BX
	JE   dot3done

dot3row:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ CX, CX
	TESTQ AX, AX
	JE   dot3tail

dot3loop:
	VMOVUPS (SI)(CX*4), Y12
	VMOVUPS 32(SI)(CX*4), Y13
	VMOVUPS 64(SI)(CX*4), Y14
	VMOVUPS 96(SI)(CX*4), Y15
	VFMADD231PS (R8)(CX*4), Y12, Y0
	VFMADD231PS 32(R8)(CX*4), Y13, Y1
	VFMADD231PS 64(R8)(CX*4), Y14, Y2
	VFMADD231PS 96(R8)(CX*4), Y15, Y3
	VFMADD231PS (R9)(CX*4), Y12, Y4
	VFMADD231PS 32(R9)(CX*4), Y13, Y5
	VFMADD231PS 64(R9)(CX*4), Y14, Y6
	VFMADD231PS 96(R9)(CX*4), Y15, Y7
	VFMADD231PS (R10)(CX*4), Y12, Y8
	VFMADD231PS 32(R10)(CX*4), Y13, Y9
	VFMADD231PS 64(R10)(CX*4), Y14, Y10
	VFMADD231PS 96(R10)(CX*4), Y15, Y11
	ADDQ $32, CX
	CMPQ CX, AX
	JNE  dot3loop

	VADDPS       Y0, Y1, Y0
	VADDPS       Y0, Y2, Y0
	VADDPS       Y0, Y3, Y0
	VEXTRACTF128 $0x01, Y0, X1
	VADDPS       X1, X0, X0
	VPERMILPD    $0x01, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VADDPS       Y4, Y5, Y4
	VADDPS       Y4, Y6, Y4
	VADDPS       Y4, Y7, Y4
	VEXTRACTF128 $0x01, Y4, X5
	VADDPS       X5, X4, X4
	VPERMILPD    $0x01, X4, X5
	VADDPS       X5, X4, X4
	VMOVSHDUP    X4, X5
	VADDSS       X5, X4, X4
	VADDPS       Y8, Y9, Y8
	VADDPS       Y8, Y10, Y8
	VADDPS       Y8, Y11, Y8
	VEXTRACTF128 $0x01, Y8, X9
	VADDPS       X9, X8, X8
	VPERMILPD    $0x01, X8, X9
	VADDPS       X9, X8, X8
	VMOVSHDUP    X8, X9
	VADDSS       X9, X8, X8

dot3tail:
	MOVQ AX, CX
	CMPQ CX, DX
	JE   dot3store

dot3scalar:
	VMOVSS      (SI)(CX*4), X12
	VFMADD231SS (R8)(CX*4), X12, X0
	VFMADD231SS (R9)(CX*4), X12, X4
	VFMADD231SS (R10)(CX*4), X12, X8
	INCQ        CX
	CMPQ        CX, DX
	JNE         dot3scalar

dot3store:
	VMOVSS X0, (R11)
	VMOVSS X4, (R12)
	VMOVSS X8, (R13)
	ADDQ   $4, R11
	ADDQ   $4, R12
	ADDQ   $4, R13
	ADDQ   R14, SI
	DECQ   BX
	JNE    dot3row

dot3done:
	VZEROUPPER
	RET

// The pieces of dot3x4PackedAVX2, written once: the twelve accumulators
// zeroed; one 8-element step of a phase (seven loads, twelve FMAs); the
// accumulators stored to scratch, added to it and stored, or added to it;
// and vek's horizontal sum of one accumulator (y, its low half x).
#define TILE_ZERO \
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

#define TILE_STEP \
	VMOVUPS (R8)(CX*1), Y12; \
	VMOVUPS (R9)(CX*1), Y13; \
	VMOVUPS (R10)(CX*1), Y14; \
	VMOVUPS (SI)(CX*1), Y15; \
	VFMADD231PS Y12, Y15, Y0; \
	VFMADD231PS Y13, Y15, Y1; \
	VFMADD231PS Y14, Y15, Y2; \
	VMOVUPS (R11)(CX*1), Y15; \
	VFMADD231PS Y12, Y15, Y3; \
	VFMADD231PS Y13, Y15, Y4; \
	VFMADD231PS Y14, Y15, Y5; \
	VMOVUPS (R12)(CX*1), Y15; \
	VFMADD231PS Y12, Y15, Y6; \
	VFMADD231PS Y13, Y15, Y7; \
	VFMADD231PS Y14, Y15, Y8; \
	VMOVUPS (R13)(CX*1), Y15; \
	VFMADD231PS Y12, Y15, Y9; \
	VFMADD231PS Y13, Y15, Y10; \
	VFMADD231PS Y14, Y15, Y11

#define TILE_SAVE \
	VMOVUPS Y0, 0(BX); \
	VMOVUPS Y1, 32(BX); \
	VMOVUPS Y2, 64(BX); \
	VMOVUPS Y3, 96(BX); \
	VMOVUPS Y4, 128(BX); \
	VMOVUPS Y5, 160(BX); \
	VMOVUPS Y6, 192(BX); \
	VMOVUPS Y7, 224(BX); \
	VMOVUPS Y8, 256(BX); \
	VMOVUPS Y9, 288(BX); \
	VMOVUPS Y10, 320(BX); \
	VMOVUPS Y11, 352(BX)

#define TILE_ADD_SAVE \
	VADDPS  0(BX), Y0, Y0; \
	VMOVUPS Y0, 0(BX); \
	VADDPS  32(BX), Y1, Y1; \
	VMOVUPS Y1, 32(BX); \
	VADDPS  64(BX), Y2, Y2; \
	VMOVUPS Y2, 64(BX); \
	VADDPS  96(BX), Y3, Y3; \
	VMOVUPS Y3, 96(BX); \
	VADDPS  128(BX), Y4, Y4; \
	VMOVUPS Y4, 128(BX); \
	VADDPS  160(BX), Y5, Y5; \
	VMOVUPS Y5, 160(BX); \
	VADDPS  192(BX), Y6, Y6; \
	VMOVUPS Y6, 192(BX); \
	VADDPS  224(BX), Y7, Y7; \
	VMOVUPS Y7, 224(BX); \
	VADDPS  256(BX), Y8, Y8; \
	VMOVUPS Y8, 256(BX); \
	VADDPS  288(BX), Y9, Y9; \
	VMOVUPS Y9, 288(BX); \
	VADDPS  320(BX), Y10, Y10; \
	VMOVUPS Y10, 320(BX); \
	VADDPS  352(BX), Y11, Y11; \
	VMOVUPS Y11, 352(BX)

#define TILE_ADD \
	VADDPS  0(BX), Y0, Y0; \
	VADDPS  32(BX), Y1, Y1; \
	VADDPS  64(BX), Y2, Y2; \
	VADDPS  96(BX), Y3, Y3; \
	VADDPS  128(BX), Y4, Y4; \
	VADDPS  160(BX), Y5, Y5; \
	VADDPS  192(BX), Y6, Y6; \
	VADDPS  224(BX), Y7, Y7; \
	VADDPS  256(BX), Y8, Y8; \
	VADDPS  288(BX), Y9, Y9; \
	VADDPS  320(BX), Y10, Y10; \
	VADDPS  352(BX), Y11, Y11

#define HSUM(y, x) \
	VEXTRACTF128 $0x01, y, X15; \
	VADDPS X15, x, x; \
	VPERMILPD $0x01, x, X15; \
	VADDPS X15, x, x; \
	VMOVSHDUP x, X15; \
	VADDSS X15, x, x

// STORE4(out, a, b, c, d) stores the scores a–d of four consecutive rows
// at the pointer in argument out and advances it past them.
#define STORE4(out, a, b, c, d) \
	MOVQ   out, AX; \
	VMOVSS a, 0(AX); \
	VMOVSS b, 4(AX); \
	VMOVSS c, 8(AX); \
	VMOVSS d, 12(AX); \
	ADDQ   $16, AX; \
	MOVQ   AX, out

// func dot3x4PackedAVX2(q0, q1, q2, rows *float32, dim, n int, out0, out1, out2, scratch *float32)
//
// Scores three queries against n rows (a multiple of four, dim apart),
// all packed phase-major (see packPhases), four rows at a time:
// out_k[r] = q_k · row r, bit for bit as vek's Dot_AVX2_F32 scores the
// unpacked vectors; dim ≥ 32. vek's four 8-lane accumulators are
// independent chains until they are added, ((a0+a1)+a2)+a3, so each is
// computed in its own phase over the packed run of its elements: a phase
// needs one accumulator per (query, row) pair — twelve, in Y0–Y11 — with
// the queries in Y12–Y14 and each row's vector in Y15 in turn: seven loads
// for twelve FMAs, against sixteen for twelve when all four accumulators
// of three pairs must be live. After each phase the pairs' running sums in
// scratch (12 × 8 floats) take the phase's accumulator, in vek's order of
// additions; the horizontal sum and the scalar tail (the dim mod 32
// elements packing leaves in place, by FMA in order) follow vek's. The
// scores are stored straight into out0–out2, and the loop over the rows
// runs here, so a chunk of rows costs one call.
TEXT ·dot3x4PackedAVX2(SB), NOSPLIT, $0-80
	MOVQ q0+0(FP), R8
	MOVQ q1+8(FP), R9
	MOVQ q2+16(FP), R10
	MOVQ rows+24(FP), SI
	MOVQ dim+32(FP), R14
	SHLQ $2, R14               // row bytes
	MOVQ dim+32(FP), R15
	ANDQ $-32, R15             // bytes per phase: main elements · 4 bytes / 4 phases
	MOVQ scratch+72(FP), BX
	CMPQ n+40(FP), $0
	JLE  dot34done

dot34tile:
	LEAQ (SI)(R14*1), R11
	LEAQ (R11)(R14*1), R12
	LEAQ (R12)(R14*1), R13
	XORQ DI, DI                // phase start
	XORQ CX, CX
	MOVQ R15, DX               // phase end

	TILE_ZERO
dot34phase0:
	TILE_STEP
	ADDQ $32, CX
	CMPQ CX, DX
	JNE  dot34phase0
	TILE_SAVE
	ADDQ R15, DI
	MOVQ DI, CX
	LEAQ (DI)(R15*1), DX
	TILE_ZERO
dot34phase1:
	TILE_STEP
	ADDQ $32, CX
	CMPQ CX, DX
	JNE  dot34phase1
	TILE_ADD_SAVE
	ADDQ R15, DI
	MOVQ DI, CX
	LEAQ (DI)(R15*1), DX
	TILE_ZERO
dot34phase2:
	TILE_STEP
	ADDQ $32, CX
	CMPQ CX, DX
	JNE  dot34phase2
	TILE_ADD_SAVE
	ADDQ R15, DI
	MOVQ DI, CX
	LEAQ (DI)(R15*1), DX
	TILE_ZERO
dot34phase3:
	TILE_STEP
	ADDQ $32, CX
	CMPQ CX, DX
	JNE  dot34phase3
	TILE_ADD
	HSUM(Y0, X0)
	HSUM(Y1, X1)
	HSUM(Y2, X2)
	HSUM(Y3, X3)
	HSUM(Y4, X4)
	HSUM(Y5, X5)
	HSUM(Y6, X6)
	HSUM(Y7, X7)
	HSUM(Y8, X8)
	HSUM(Y9, X9)
	HSUM(Y10, X10)
	HSUM(Y11, X11)
	MOVQ dim+32(FP), DX
	MOVQ DX, CX
	ANDQ $-32, CX
	CMPQ CX, DX
	JE   dot34store
dot34tail:
	VMOVSS (SI)(CX*4), X15
	VFMADD231SS (R8)(CX*4), X15, X0
	VFMADD231SS (R9)(CX*4), X15, X1
	VFMADD231SS (R10)(CX*4), X15, X2
	VMOVSS (R11)(CX*4), X15
	VFMADD231SS (R8)(CX*4), X15, X3
	VFMADD231SS (R9)(CX*4), X15, X4
	VFMADD231SS (R10)(CX*4), X15, X5
	VMOVSS (R12)(CX*4), X15
	VFMADD231SS (R8)(CX*4), X15, X6
	VFMADD231SS (R9)(CX*4), X15, X7
	VFMADD231SS (R10)(CX*4), X15, X8
	VMOVSS (R13)(CX*4), X15
	VFMADD231SS (R8)(CX*4), X15, X9
	VFMADD231SS (R9)(CX*4), X15, X10
	VFMADD231SS (R10)(CX*4), X15, X11
	INCQ CX
	CMPQ CX, DX
	JNE  dot34tail
dot34store:
	STORE4(out0+48(FP), X0, X3, X6, X9)
	STORE4(out1+56(FP), X1, X4, X7, X10)
	STORE4(out2+64(FP), X2, X5, X8, X11)
	LEAQ (R13)(R14*1), SI
	SUBQ $4, n+40(FP)
	JG   dot34tile
dot34done:
	VZEROUPPER
	RET

// func firstNotBelowAVX2(s *float32, n int, bar float32) int
//
// The index of the first of s[0..n) (n a multiple of 8) that is not below
// bar, !(s[i] < bar) as Go compares, or n: eight at a time by VCMPPS
// (NGT_US on bar, s: true unless bar > s[i], so NaN counts as not below)
// and VMOVMSKPS, the lowest set bit giving the lane.
TEXT ·firstNotBelowAVX2(SB), NOSPLIT, $0-32
	MOVQ         s+0(FP), SI
	MOVQ         n+8(FP), DX
	VBROADCASTSS bar+16(FP), Y1
	XORQ         CX, CX
	CMPQ         DX, $0
	JE           fnbnone

fnbloop:
	VCMPPS    $0x0A, (SI)(CX*4), Y1, Y0
	VMOVMSKPS Y0, AX
	TESTL     AX, AX
	JNE       fnbfound
	ADDQ      $8, CX
	CMPQ      CX, DX
	JL        fnbloop

fnbnone:
	VZEROUPPER
	MOVQ DX, ret+24(FP)
	RET

fnbfound:
	BSFL AX, AX
	ADDQ AX, CX
	VZEROUPPER
	MOVQ CX, ret+24(FP)
	RET
