//go:build !purego

#include "textflag.h"

// func dotInt8AVX2(a, b *int8, n int) int32
//
// Sign-extends 16 int8 lanes of each operand to int16 (VPMOVSXBW),
// multiplies and adds adjacent pairs into int32 (VPMADDWD) and accumulates
// in two registers; the n%32 tail is done one byte at a time. Products of
// two int8 are at most 2^14, a pair sum at most 2^15, so the int32 lanes
// cannot overflow below 2^16 pairs per lane (n < 2^20).
TEXT ·dotInt8AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	XORQ DX, DX

loop32:
	CMPQ CX, $32
	JL   tail
	VPMOVSXBW (SI), Y2
	VPMOVSXBW (DI), Y3
	VPMADDWD  Y3, Y2, Y2
	VPADDD    Y2, Y0, Y0
	VPMOVSXBW 16(SI), Y4
	VPMOVSXBW 16(DI), Y5
	VPMADDWD  Y5, Y4, Y4
	VPADDD    Y4, Y1, Y1
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JMP       loop32

tail:
	TESTQ CX, CX
	JE    reduce
	MOVBQSX (SI), AX
	MOVBQSX (DI), BX
	IMULQ   BX, AX
	ADDQ    AX, DX
	INCQ    SI
	INCQ    DI
	DECQ    CX
	JMP     tail

reduce:
	VPADDD       Y1, Y0, Y0
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
