// Package chip holds cycle-faithful simulators of three modular
// exponentiation chips, registered as the engine kind "chip":
//
//   - "orup561": the 1995 VLSI processor of Orup's thesis (radix-32
//     most-significant-digit-first modular multiplication with a quotient
//     estimated from leading bits and a partially reduced remainder,
//     parallel right-to-left binary exponentiation; texp = 2·(ni+nw)·nj·tΩ).
//   - "pukcc": Microchip's PUKCC as driven by PUKCL at 120 MHz (Montgomery
//     products, sliding-window ExpMod with W = 1…4, the CRT service, the
//     Fast public-exponent option, ECDSA on P-256/384/521), with the
//     datasheet's size limits and PUKCL status codes ([StatusError]).
//   - "cryptech": the 2015 Cryptech bit-serial Montgomery core with libhal's
//     padding (core=modexp2015), or ModExpA7 with two multipliers and a
//     native CRT mode (core=modexpa7).
//
// Every result is computed with the chip's own algorithm and is bit-exact
// (the tests compare with math/big); every operation reports its cycles,
// simulated device time and (orup561) energy through engine.Cost. The
// models, their sources and what is inferred are described in
// docs/ENGINES.md; package report (cmd/modexp-token/report) reproduces every
// published figure and draws the timing chart.
//
// # Spec syntax
//
// An engine spec is "chip:" followed by a profile and comma-separated
// options: key=value, or a bare flag, or a bare fault with a colon:
//
//	chip:orup561,f=30e6,nw=5,vdd=4.5,scaled
//	chip:pukcc,w=3,expram=other
//	chip:cryptech,core=modexpa7,cores=2
//	chip:cryptech,zero-above:1024
//
// Options of every profile:
//
//	time_scale=X   sleep X × the simulated device time per operation (default 0)
//	fault=F        injected fault: none, zero, bitflip, zero-above:BITS
//	seed=N         seed of the fault randomness (default: random)
//
// orup561:
//
//	f=HZ        clock fΩ (default 25e6); above fmax(Vdd) results get bit errors
//	vdd=V       supply, 4.5 to 5.5 (default 5.0); fmax = 24 / 27 / 29.5 MHz at 4.5 / 5.0 / 5.5 V
//	nw=N        adder wait states (default 7); below 7 (Vdd < 5 V) or 6 results get bit errors
//	ni=N        radix-32 multiplier digits (default ⌈n/5⌉+2 per modulus; at most 115)
//	nj=N        exponent bits per exponentiation (default: modulus length, or the
//	            exponent's length for a public exponent; at most 561)
//	scaled      allow moduli up to 8192 bits: a labelled extrapolation of eq. (4.5)
//
// pukcc:
//
//	w=1..4      window (default: the largest the size limits allow)
//	expram=crypto|other   where the exponent lives; sets the size limits (default crypto)
//	f=HZ        clock (default 120e6)
//
// cryptech:
//
//	core=modexp2015|modexpa7   (default modexp2015)
//	clock=HZ    effective clock (default 33.4e6 for modexp2015, 90e6 assumed for modexpa7)
//	pad=BOOL    modexp2015: pad the exponent to the operand length, as libhal did in
//	            June 2015 (default true)
//	cores=1|2, array=P, addr_width=W   modexpa7: cores, systolic array power, operand buffer
//
// Unknown options are errors.
//
// # What this package must never do
//
// It must never be mistaken for a constant-time implementation: the
// simulators use math/big and variable-time point arithmetic, and say so
// (Info().ConstantTime is false). It never prints; results from a chip
// driven out of spec are wrong on purpose, and callers must check them
// (engine/alg/rsa does).
package chip
