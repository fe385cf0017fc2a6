// The console shell: sign-in, the bot list, the tabs of one bot, and hash routes
// (#/bots/<botId>/<tab>[/<item>]) that hold no secret.
import { createApi } from './api.js';
import { fill, h } from './dom.js';
import { forgetToken, saveToken, savedToken } from './session.js';
import { errorNotice, toaster } from './widgets.js';
import { showSignIn } from './views/sign-in.js';
import { newBotForm } from './views/new-bot.js';
import { overviewView } from './views/overview.js';
import { webhooksView } from './views/webhooks.js';
import { connectorsView } from './views/connectors.js';
import { tokensView } from './views/tokens.js';
import { invocationsView } from './views/invocations.js';
import { settingsView } from './views/settings.js';

/**
 * @typedef {import('./api.js').Api} Api
 * @typedef {{ api: Api, bot: string, item: string | undefined, go: (tab: string, item?: string) => void, toast: (message: string, kind?: 'success' | 'error' | 'info') => void, botsChanged: () => void, leaveBot: () => void }} ViewContext
 * @typedef {{ dispose?: () => void, show?: (item: string | undefined) => void }} Mounted
 * @typedef {(root: HTMLElement, ctx: ViewContext) => Mounted} View
 */

/** @type {{ id: string, title: string, view: View }[]} */
const TABS = [
  { id: 'overview', title: 'Overview', view: overviewView },
  { id: 'webhooks', title: 'Webhooks', view: webhooksView },
  { id: 'connectors', title: 'Connectors', view: connectorsView },
  { id: 'authentication', title: 'Authentication', view: tokensView },
  { id: 'invocations', title: 'Invocations', view: invocationsView },
  { id: 'settings', title: 'Settings', view: settingsView },
];

const app = /** @type {HTMLElement} */ (document.getElementById('app'));
const toasts = toaster();
/** Ends the signed-in session: its view's timers and its route listener stop with it. */
let endSession = () => {};

/** @returns {{ bot?: string, tab: string, item?: string }} */
function parseRoute() {
  const [, first, bot, tab, ...rest] = location.hash.replace(/^#/, '').split('/');
  if (first !== 'bots' || !bot) return { tab: 'overview' };
  const known = TABS.some((t) => t.id === tab);
  return { bot: decodeURIComponent(bot), tab: known ? tab : 'overview', item: rest.length ? decodeURIComponent(rest.join('/')) : undefined };
}

/**
 * @param {string} bot
 * @param {string} tab
 * @param {string} [item]
 */
const routeOf = (bot, tab, item) => `#/bots/${encodeURIComponent(bot)}/${tab}${item ? `/${encodeURIComponent(item)}` : ''}`;

/** @param {string} [reason] */
function signOut(reason) {
  endSession();
  forgetToken();
  showSignIn(app, { reason, onSignedIn: start });
}

/** @param {string} token */
function start(token) {
  saveToken(token);
  let active = true;
  const api = createApi(token, () => {
    if (active) signOut('The service refused the admin token; sign in again.');
  });

  const botList = h('ul', { class: 'bot-list' });
  const tabs = h('nav', { class: 'tabs', 'aria-label': 'Bot views' });
  const title = h('h1', { class: 'bot-title' });
  const view = h('div', { class: 'view' });
  const main = h('main', { class: 'main' }, h('div', { class: 'bot-head' }, title, tabs), view);
  fill(
    app,
    h(
      'header',
      { class: 'topbar' },
      h('div', { class: 'brand' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }), 'Generic Integration', h('span', { class: 'brand-sub' }, 'Console')),
      h('button', { type: 'button', class: 'ghost', onclick: () => signOut() }, 'Sign out'),
    ),
    h(
      'div',
      { class: 'layout' },
      h('nav', { class: 'sidebar', 'aria-label': 'Bots' }, h('h2', { class: 'sidebar-title' }, 'Bots'), botList, newBotForm(api, (bot) => botsChanged(bot))),
      main,
    ),
    toasts.element,
  );

  /** @type {string[]} */
  let bots = [];
  /** @type {{ bot: string, tab: string, mounted: Mounted } | null} */
  let current = null;

  function renderBots() {
    const { bot } = parseRoute();
    fill(
      botList,
      bots.length === 0 ? h('li', { class: 'muted small' }, 'No bots yet') : null,
      bots.map((b) => h('li', {}, h('a', { href: routeOf(b, parseRoute().tab), class: b === bot ? 'active' : '', 'aria-current': b === bot ? 'page' : null }, b))),
    );
  }

  /** @param {string} [select] a bot to show once the list is loaded */
  async function botsChanged(select) {
    try {
      bots = await api.bots();
    } catch (error) {
      if (active) fill(view, errorNotice(error));
      return;
    }
    if (!active) return;
    const next = select ? routeOf(select, 'overview') : location.hash;
    if (next === location.hash) route();
    else location.hash = next;
  }

  function route() {
    if (!active) return;
    const { bot, tab, item } = parseRoute();
    renderBots();
    if (!bot) {
      if (bots.length > 0) {
        location.replace(routeOf(bots[0], 'overview'));
        return;
      }
      current?.mounted.dispose?.();
      current = null;
      fill(title, 'Welcome');
      fill(tabs);
      fill(
        view,
        h(
          'div',
          { class: 'empty welcome' },
          h('p', { class: 'empty-title' }, 'No bots yet'),
          h('p', {}, 'A bot appears once it has an entity. Add one with “New bot” on the left: give it an id and the entity its webhook data is stored in.'),
        ),
      );
      return;
    }
    if (current && current.bot === bot && current.tab === tab && current.mounted.show) {
      current.mounted.show(item);
      return;
    }
    current?.mounted.dispose?.();
    const spec = TABS.find((t) => t.id === tab) ?? TABS[0];
    document.title = `${bot} · ${spec.title} — Generic Integration console`;
    fill(title, h('span', { class: 'muted' }, 'Bot '), bot);
    fill(
      tabs,
      TABS.map((t) => h('a', { href: routeOf(bot, t.id), class: t.id === tab ? 'tab active' : 'tab', 'aria-current': t.id === tab ? 'page' : null }, t.title)),
    );
    fill(view);
    /** @type {ViewContext} */
    const ctx = {
      api,
      bot,
      item,
      go: (nextTab, nextItem) => {
        location.hash = routeOf(bot, nextTab, nextItem);
      },
      toast: toasts.show,
      botsChanged: () => void botsChanged(),
      // After the bot is deleted: forget it at once, so the next route cannot pick it.
      leaveBot: () => {
        bots = bots.filter((b) => b !== bot);
        location.hash = '#/';
      },
    };
    current = { bot, tab, mounted: spec.view(view, ctx) };
  }

  endSession = () => {
    active = false;
    window.onhashchange = null;
    current?.mounted.dispose?.();
    current = null;
  };
  window.onhashchange = route;
  void botsChanged();
}

const token = savedToken();
if (token) start(token);
else showSignIn(app, { onSignedIn: start });
