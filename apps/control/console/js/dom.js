// Building the page from elements and text nodes only: no HTML strings anywhere (the page's
// Content-Security-Policy enforces Trusted Types, so innerHTML and friends would throw).

/** @typedef {Node | string | number | null | undefined | false} Child */
/** @typedef {Child | Child[]} Children */
/** @typedef {Record<string, string | number | boolean | null | undefined | EventListener>} Attrs */

/** @param {Children[]} children */
function nodes(children) {
  /** @type {(Node | string)[]} */
  const out = [];
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    out.push(typeof child === 'number' ? String(child) : child);
  }
  return out;
}

/**
 * @param {Element} el
 * @param {Attrs} attrs
 */
function applyAttrs(el, attrs) {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.replace(/^on/, ''), value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
}

/**
 * An HTML element: `h('button', { class: 'primary', onclick: save }, 'Save')`.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...Children} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  applyAttrs(el, attrs);
  el.append(...nodes(children));
  return el;
}

/**
 * An SVG element (charts are drawn with SVG attributes, never inline styles).
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs]
 * @param {...Children} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  applyAttrs(el, attrs);
  el.append(...nodes(children));
  return el;
}

/**
 * Replaces everything inside `parent`.
 * @param {Element} parent
 * @param {...Children} children
 */
export function fill(parent, ...children) {
  parent.replaceChildren(...nodes(children));
}
