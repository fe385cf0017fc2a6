// Comparing two versions of a connector, chosen side by side.
import { fill, h } from '../dom.js';
import { errorNotice } from '../widgets.js';
import { versionDiffView } from './version-diff.js';

/**
 * Two versions chosen side by side: the settings that differ and the code.
 * @param {{ api: ReturnType<typeof import('../api.js').createApi>, bot: string, integration: import('../api.js').IntegrationDetail, latest: number }} parts
 */
export function compareSection({ api, bot, integration, latest }) {
  const options = (/** @type {number} */ chosen) => integration.versions.map((v) => h('option', { value: v.version, selected: v.version === chosen }, `v${v.version}`));
  const to = integration.version;
  const from = integration.versions.find((v) => v.version < to)?.version ?? latest;
  const fromSelect = h('select', { 'aria-label': 'Compare from version' }, options(from));
  const toSelect = h('select', { 'aria-label': 'Compare to version' }, options(to));
  const result = h('div', { class: 'diff-result' });
  const compare = async () => {
    fill(result, h('p', { class: 'muted' }, 'Comparing…'));
    try {
      fill(result, versionDiffView(await api.diff(bot, integration.integrationId, Number(fromSelect.value), Number(toSelect.value))));
    } catch (error) {
      fill(result, errorNotice(error));
    }
  };
  return h(
    'section',
    { class: 'compare' },
    h('h3', {}, 'Compare versions'),
    h('div', { class: 'row' }, fromSelect, h('span', { class: 'muted' }, 'with'), toSelect, h('button', { type: 'button', class: 'ghost', onclick: compare }, 'Compare')),
    result,
  );
}
