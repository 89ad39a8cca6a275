// Exact integers for the calculators (BigInt: a parameter count or a cache size passes 2^53 long
// before the inputs reach their limits) and the few float steps the Python pages take on them,
// done as Python does them: int / int is the correctly rounded quotient (CPython's true division),
// f"{n:,}" groups digits by threes.

/** Python's `a / b` for whole numbers (b > 0): the double nearest the exact quotient, ties to even. */
export function ratio(a: bigint, b: bigint): number {
  if (b <= 0n) throw new RangeError("ratio: the divisor must be positive");
  if (a === 0n) return 0;
  const negative = a < 0n;
  const n = negative ? -a : a;
  // Scale so that the integer quotient has at least 60 significant bits, then keep one sticky
  // bit for the remainder: Number(BigInt) rounds to nearest, ties to even, and with the sticky
  // bit a true tie can only be an exact one, so the result is the correctly rounded quotient.
  const shift = BigInt(Math.max(0, 62 - (n.toString(2).length - b.toString(2).length)));
  const scaled = n << shift;
  const q = scaled / b;
  const sticky = scaled % b === 0n ? 0n : 1n;
  const value = Number((q << 1n) | sticky) / Math.pow(2, Number(shift) + 1);
  return negative ? -value : value;
}

/** Python's f"{n:,}" of a whole number. */
export function commas(n: bigint | number): string {
  const text = (typeof n === "bigint" ? n : BigInt(n)).toString();
  const negative = text.startsWith("-");
  const digits = negative ? text.slice(1) : text;
  return (negative ? "-" : "") + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Python's round(x) of a double: to the nearest whole number, an exact half to the even one. */
export function roundHalfEven(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

/** True when `v` is a whole number in [low, high] (the checks a typed box and a link value pass). */
export function wholeIn(v: unknown, low: number, high: number): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= low && v <= high;
}
