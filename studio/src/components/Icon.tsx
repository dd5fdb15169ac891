/**
 * Control glyphs drawn as inline SVG: media and arrow symbols such as ⏮ and ⏭ are missing from many system fonts
 * (a box is drawn instead), and an icon must look the same on every machine. 16x16 grid, `currentColor`.
 */
const PATHS = {
  first: 'M3 3h2v10H3zM13 3v10L6 8z',
  back: 'M12 3v10L5 8z',
  forward: 'M4 3v10l7-5z',
  last: 'M11 3h2v10h-2zM3 3v10l7-5z',
  /** Two corners pulled outwards: fit the whole machine in view. */
  fit: 'M2 2h5v2H4v3H2zM14 14H9v-2h3V9h2zM9 2h5v5h-2V4H9zM7 14H2V9h2v3h3z',
  /** An arrow down to a bar: move to the end of the list (the fallback). */
  fallback: 'M7 2h2v6h3l-4 4-4-4h3zM3 13h10v2H3z',
  /** A small triangle: the initial state. */
  initial: 'M5 3v10l7-5z',
} as const;

export type IconName = keyof typeof PATHS;

/** One icon, decorative (the button around it carries the label). */
export function Icon({ name, size = 12 }: { name: IconName; size?: number }) {
  return (
    <svg className="icon-svg" width={size} height={size} viewBox="0 0 16 16" aria-hidden="true" focusable="false" data-icon={name}>
      <path d={PATHS[name]} fill="currentColor" />
    </svg>
  );
}
