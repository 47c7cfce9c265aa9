/**
 * Series colours: Tableau 10 (Maureen Stone's 2016 palette), ten categorical colours chosen to stay
 * apart from each other and readable on light and dark backgrounds. Past ten series the colours
 * repeat with a dash pattern, so every series still differs from every other.
 */
export const PALETTE: readonly string[] = [
  '#4e79a7', // blue
  '#f28e2b', // orange
  '#e15759', // red
  '#76b7b2', // teal
  '#59a14f', // green
  '#edc948', // yellow
  '#b07aa1', // purple
  '#ff9da7', // pink
  '#9c755f', // brown
  '#bab0ac', // grey
];

const DASHES = ['', '6 3', '2 3', '8 3 2 3'];

/** The colour and dash pattern ('' for solid) of the i-th series of a chart. */
export function seriesStyle(i: number): { colour: string; dash: string } {
  const n = PALETTE.length;
  return { colour: PALETTE[i % n] as string, dash: DASHES[Math.floor(i / n) % DASHES.length] as string };
}
