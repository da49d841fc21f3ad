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
