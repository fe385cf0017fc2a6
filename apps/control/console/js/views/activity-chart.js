// Inline SVG charts of the activity endpoint: invocations per minute, failures stacked on top.
import { svg } from '../dom.js';
import { formatClock } from '../format.js';

const MINUTE_MS = 60_000;
const WIDTH = 720;
const HEIGHT = 170;
const PAD = { top: 10, right: 6, bottom: 22, left: 34 };

/**
 * The top of the y axis: the smallest round number at or above `n` whose half (the middle grid
 * line) is a whole number too.
 * @param {number} n
 */
function axisTop(n) {
  if (n <= 2) return 2;
  const power = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 4, 6, 8, 10]) if (m * power >= n && (m * power) % 2 === 0) return m * power;
  return 10 * power;
}

/**
 * @param {import('../api.js').ActivitySeries} series
 * @param {number} from start of the first minute (epoch ms)
 * @param {string} label what the chart shows, for screen readers
 */
export function activityChart(series, from, label) {
  const minutes = series.perMinute.length;
  const max = axisTop(Math.max(...series.perMinute));
  const innerWidth = WIDTH - PAD.left - PAD.right;
  const innerHeight = HEIGHT - PAD.top - PAD.bottom;
  const step = innerWidth / minutes;
  const bar = Math.max(1, step - (step > 6 ? 2 : 0.5));
  /** @param {number} value */
  const y = (value) => PAD.top + innerHeight - (value / max) * innerHeight;

  const chart = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'chart', role: 'img', 'aria-label': label });
  for (const value of [0, max / 2, max]) {
    chart.append(
      svg('line', { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(value), y2: y(value), class: value === 0 ? 'axis' : 'grid' }),
      svg('text', { x: PAD.left - 6, y: y(value) + 4, class: 'tick', 'text-anchor': 'end' }, value),
    );
  }
  for (let i = 0; i < minutes; i++) {
    const at = from + i * MINUTE_MS;
    const x = PAD.left + i * step;
    const count = series.perMinute[i];
    const failed = series.failedPerMinute[i];
    const group = svg('g', { class: 'minute' }, svg('title', {}, `${formatClock(at)}: ${count} invocation${count === 1 ? '' : 's'}${failed ? `, ${failed} failed` : ''}`));
    // A full-height target per minute, so the tooltip shows on empty minutes too.
    group.append(svg('rect', { x, y: PAD.top, width: step, height: innerHeight, class: 'hover' }));
    if (count > failed) group.append(svg('rect', { x: x + (step - bar) / 2, y: y(count), width: bar, height: y(failed) - y(count), class: 'bar ok' }));
    if (failed > 0) group.append(svg('rect', { x: x + (step - bar) / 2, y: y(failed), width: bar, height: y(0) - y(failed), class: 'bar failed' }));
    chart.append(group);
    if (new Date(at).getMinutes() % (minutes > 90 ? 60 : 15) === 0) {
      chart.append(svg('text', { x: x + step / 2, y: HEIGHT - 6, class: 'tick', 'text-anchor': 'middle' }, formatClock(at)));
    }
  }
  return chart;
}

/**
 * A tiny line of counts per minute, for a table row.
 * @param {number[]} values
 * @param {string} label
 */
export function sparkline(values, label) {
  const width = 140;
  const height = 28;
  const max = Math.max(1, ...values);
  const step = width / Math.max(1, values.length - 1);
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(height - 2 - (v / max) * (height - 4)).toFixed(1)}`).join(' ');
  return svg(
    'svg',
    { viewBox: `0 0 ${width} ${height}`, width, height, class: 'sparkline', role: 'img', 'aria-label': label },
    svg('polyline', { points: `0,${height} ${points} ${width},${height}`, class: 'spark-area' }),
    svg('polyline', { points, class: 'spark-line' }),
  );
}
