import { describe, expect, it } from 'vitest';
import { PALETTE, seriesStyle } from '../lib/chart/palette';

/** CIE L*a*b* of an sRGB colour (#rrggbb), D65. */
function lab(hex: string): [number, number, number] {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  const x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
  const y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  const z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : ((24389 / 27) * t + 16) / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}

const deltaE = (a: string, b: string) => Math.hypot(...lab(a).map((v, i) => v - (lab(b)[i] as number)));

describe('chart palette', () => {
  it('has at least 10 colours, every pair clearly apart (CIE76 ΔE > 20)', () => {
    expect(PALETTE.length).toBeGreaterThanOrEqual(10);
    for (const c of PALETTE) expect(c).toMatch(/^#[0-9a-f]{6}$/);
    let closest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < PALETTE.length; i++)
      for (let j = i + 1; j < PALETTE.length; j++) closest = Math.min(closest, deltaE(PALETTE[i] as string, PALETTE[j] as string));
    expect(closest).toBeGreaterThan(20);
  });

  it('gives every one of 40 series a distinct colour and dash pair', () => {
    const styles = Array.from({ length: 40 }, (_, i) => seriesStyle(i));
    expect(new Set(styles.map((s) => `${s.colour} ${s.dash}`)).size).toBe(40);
    expect(styles.slice(0, 10).every((s) => s.dash === '')).toBe(true);
    expect(new Set(styles.slice(0, 10).map((s) => s.colour)).size).toBe(10);
  });
});
