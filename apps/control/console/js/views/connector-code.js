// The code of a connector version: the script, or the sources of a bundle and the bundle itself.
import { fill, h } from '../dom.js';
import { codeBlock } from '../widgets.js';

/**
 * The code of a version: as written for a plain script; for a bundle (gi connector deploy of a
 * project), the files its author wrote, one at a time, and the bundle the sandbox runs on request.
 * @param {import('../api.js').IntegrationDetail} integration
 */
export function codeSection(integration) {
  const of = `${integration.integrationId} version ${integration.version}`;
  const sources = integration.sources ?? [];
  if (sources.length === 0) return [h('h3', {}, 'Code'), codeBlock(integration.code, { lineNumbers: true, label: `Code of ${of}` })];
  const shown = h('div', { class: 'source-file' });
  const show = (/** @type {number} */ index) => {
    for (const [i, tab] of tabs.entries()) tab.setAttribute('aria-pressed', String(i === index));
    fill(shown, codeBlock(sources[index].content, { lineNumbers: true, label: `${sources[index].path} of ${of}` }));
  };
  const tabs = sources.map((source, i) => h('button', { type: 'button', class: 'version source-tab', 'aria-pressed': 'false', onclick: () => show(i) }, source.path));
  show(0);
  return [
    h('h3', {}, 'Sources'),
    h('p', { class: 'muted small' }, 'The files this version was bundled from by gi connector deploy.'),
    h('div', { class: 'versions', role: 'group', 'aria-label': 'Source files' }, tabs),
    shown,
    h('details', { class: 'bundle' }, h('summary', {}, 'Bundle (the code that runs)'), codeBlock(integration.code, { lineNumbers: true, label: `Bundle of ${of}` })),
  ];
}
