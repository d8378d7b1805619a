/**
 * Go's text/tabwriter as kubectl configures it: cells separated by tabs,
 * each column as wide as its widest cell plus padding. The table printer
 * (get) and describe each use one.
 */
export interface TabwriterOptions {
  /** Minimal width of a column, padding included. */
  minWidth: number;
  /** Spaces added to the widest cell of a column. */
  padding: number;
}

/** The table printer's writer: printers.GetNewTabWriter (minwidth 6, padding 3). */
export const TABLE_TABWRITER: TabwriterOptions = { minWidth: 6, padding: 3 };
/** describe's tabbedString (minwidth 0, padding 2). */
export const DESCRIBE_TABWRITER: TabwriterOptions = { minWidth: 0, padding: 2 };

const runeCount = (s: string): number => [...s].length;

/**
 * Go's text/tabwriter with a space pad character and no flags: a cell is
 * text ended by a tab; a column block is a run of consecutive lines that
 * have a cell in that column, and each of its cells is padded to the block's
 * widest cell plus the padding. The last cell of a line is not in a column.
 */
export function tabwrite(text: string, opts: TabwriterOptions): string {
  const lines = text.split('\n').map((l) => l.split('\t'));
  const widths: number[] = [];
  const out: string[] = [];

  const writeLines = (line0: number, line1: number): void => {
    for (let i = line0; i < line1; i++) {
      const cells = lines[i] ?? [];
      let s = '';
      cells.forEach((cell, j) => {
        s += cell;
        const width = widths[j];
        if (width !== undefined) s += ' '.repeat(Math.max(0, width - runeCount(cell)));
      });
      out.push(s);
    }
  };

  const format = (from: number, line1: number): void => {
    let line0 = from;
    const column = widths.length;
    for (let t = line0; t < line1; t++) {
      if (column >= (lines[t]?.length ?? 0) - 1) continue;
      // A cell in this column: the block runs while the lines have one.
      writeLines(line0, t);
      line0 = t;
      let width = opts.minWidth;
      for (; t < line1; t++) {
        const cells = lines[t] ?? [];
        if (column >= cells.length - 1) break;
        width = Math.max(width, runeCount(cells[column] ?? '') + opts.padding);
      }
      widths.push(width);
      format(line0, t);
      widths.pop();
      line0 = t;
    }
    writeLines(line0, line1);
  };

  format(0, lines.length);
  return out.join('\n');
}
