export interface IntegrationLabelSettings {
  /** Whether runs are labelled by bot and integration at all (METRICS_INTEGRATION_LABELS). */
  enabled: boolean;
  /** Distinct bot/integration pairs with labels of their own; later ones share `_other` (METRICS_INTEGRATION_LIMIT). */
  limit: number;
}

/** The label value of every pair past the limit, and of every run while the labels are off. */
export const OTHER = '_other';

/**
 * The `bot` and `integration` labels of a run. Both are tenant data, so they are opt-in, and the series
 * they make are bounded: the first `limit` pairs seen by this process keep their own labels, every later
 * one counts under `_other` (docs/decisions.md, "Per-integration metrics").
 */
export class IntegrationLabels {
  private readonly known = new Map<string, { bot: string; integration: string }>();
  private readonly other = { bot: OTHER, integration: OTHER };

  constructor(private readonly settings: IntegrationLabelSettings) {}

  of(botId: string, integrationId: string): { bot: string; integration: string } {
    if (!this.settings.enabled) return this.other;
    const key = `${botId}/${integrationId}`;
    const known = this.known.get(key);
    if (known) return known;
    if (this.known.size >= this.settings.limit) return this.other;
    const labels = { bot: botId, integration: integrationId };
    this.known.set(key, labels);
    return labels;
  }
}
