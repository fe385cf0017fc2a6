/** Strings one run may rank, over all its collators; past that its compares go to the collator one by one. */
export const MAX_RANKED_STRINGS = 50_000;
/** Characters of ranked strings one run may keep on the host. */
export const MAX_RANKED_CHARS = 8 * 1024 * 1024;
/** Gap between two labels after relabelling: 32 halvings before a gap runs out. */
const SPACING = 2 ** 32;

/**
 * Labels that order strings as a collator does, so that a connector sorting with `Intl.Collator`'s
 * `compare` or `localeCompare` calls the host once per new string instead of once per comparison:
 * the sandbox keeps each string's label and compares labels. Each string compared is inserted, by
 * binary search with the collator, into a sorted list; strings the collator finds equal share a
 * label. A new label lies between its neighbours'; when no number is left between them, every label
 * is given anew and the epoch changes (the sandbox then forgets the labels it holds). Kept per run,
 * bounded in strings and characters.
 */
export class CollationRanks {
  private readonly tables = new Map<string, RankTable>();
  private strings = 0;
  private chars = 0;

  /** `[epoch, label of x, label of y]`, or null when the run has ranked as many strings as it may. */
  rank(config: string, collator: () => Intl.Collator, x: string, y: string): [number, number, number] | null {
    let table = this.tables.get(config);
    if (!table) {
      table = new RankTable(collator());
      this.tables.set(config, table);
    }
    const epoch = table.epoch;
    const lx = this.label(table, x);
    const ly = lx === null ? null : this.label(table, y);
    if (lx === null || ly === null) return null;
    // Inserting y may have given every label anew, x's too.
    return [table.epoch, table.epoch === epoch ? lx : (this.label(table, x) as number), ly];
  }

  private label(table: RankTable, text: string): number | null {
    const found = table.find(text);
    if (found.label !== null) return found.label;
    if (this.strings >= MAX_RANKED_STRINGS || this.chars + text.length > MAX_RANKED_CHARS) return null;
    this.strings++;
    this.chars += text.length;
    return table.insert(found.at, text);
  }
}

class RankTable {
  /** One string per class of strings the collator finds equal, in the collator's order, with its label. */
  private readonly entries: Array<{ text: string; label: number }> = [];
  epoch = 0;

  constructor(private readonly collator: Intl.Collator) {}

  /** The label of a string the table has (or of one the collator finds equal), else where it belongs. */
  find(text: string): { label: number; at: number } | { label: null; at: number } {
    let low = 0;
    let high = this.entries.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const order = this.collator.compare(text, this.entries[mid].text);
      if (order === 0) return { label: this.entries[mid].label, at: mid };
      if (order < 0) high = mid;
      else low = mid + 1;
    }
    return { label: null, at: low };
  }

  insert(at: number, text: string): number {
    let label = this.between(at);
    if (label === null) {
      this.entries.forEach((entry, i) => (entry.label = i * SPACING));
      this.epoch++;
      label = this.between(at) as number;
    }
    this.entries.splice(at, 0, { text, label });
    return label;
  }

  /** A label between those of the neighbours at `at - 1` and `at`, or null when none is left. */
  private between(at: number): number | null {
    const { entries } = this;
    if (entries.length === 0) return 0;
    if (at === 0) return entries[0].label - SPACING;
    if (at === entries.length) return entries[at - 1].label + SPACING;
    const middle = Math.floor((entries[at - 1].label + entries[at].label) / 2);
    return middle === entries[at - 1].label ? null : middle;
  }
}
