/**
 * The `Context` API as seen inside the sandbox, written in the sandbox's own JavaScript. The host
 * hands in only plain functions that take and return strings and numbers, so no host object ever
 * becomes reachable from connector code; entities cross the boundary as JSON text.
 *
 * Evaluated once per run in a fresh context, the prelude is a function of
 * `(host, entityJson, maxLogChars)` that defines the globals `Context` and `console` and returns
 * `{ collect, describe }` for the host: `collect()` gives `{"body": ResponseBody}` as JSON (or
 * undefined when the connector never touched an entity), `describe(error)` gives `{message, stack}`.
 */
export const PRELUDE_FILENAME = 'context.js';

export const CONTEXT_PRELUDE = String.raw`(function (host, entityJson, maxLogChars) {
  'use strict';
  const parse = JSON.parse, stringify = JSON.stringify, freeze = Object.freeze, isArray = Array.isArray;
  const hostLog = host.log, hostProgress = host.progress, hostRaise = host.raise, hostHttp = host.http;
  let entity = null, entityLoaded = false, response = null, responseSet = false;

  const show = (value) => {
    if (typeof value === 'string') return value;
    try {
      if (value instanceof Error) return String(value.name) + ': ' + String(value.message);
      const text = stringify(value);
      return text === undefined ? String(value) : text;
    } catch (_) {
      try { return String(value); } catch (_) { return '[value that cannot be shown]'; }
    }
  };
  const logger = (level) => function () {
    let text = '';
    for (let i = 0; i < arguments.length; i++) text += (i ? ' ' : '') + show(arguments[i]);
    hostLog(level, text.length > maxLogChars ? text.slice(0, maxLogChars) : text);
  };
  const Log = logger('info');

  const Context = {
    GetRequestEntity() {
      if (!entityLoaded) {
        entity = entityJson === null ? null : parse(entityJson);
        entityLoaded = true;
      }
      return entity;
    },
    SetResponseEntity(value) {
      if (value === null || typeof value !== 'object' || isArray(value)) {
        throw new TypeError('Context.SetResponseEntity expects the entity object, not ' + (value === null ? 'null' : isArray(value) ? 'an array' : typeof value) + '.');
      }
      response = value;
      responseSet = true;
    },
    RaiseError(title, message) {
      hostRaise(title === undefined ? '' : show(title), message === undefined ? '' : show(message));
      throw new Error('Context.RaiseError: ' + show(title));
    },
    Log,
    SetProgress(percent, message) {
      const value = Number(percent);
      if (!Number.isFinite(value)) throw new TypeError('Context.SetProgress expects a percentage between 0 and 100.');
      hostProgress(value, message === undefined || message === null ? undefined : show(message).slice(0, 1000));
    },
  };
  {
    Context.Http = freeze({
      Request(request) {
        return new Promise((resolve, reject) => {
          const json = stringify(request === undefined ? {} : request);
          if (typeof json !== 'string') throw new TypeError('Context.Http.Request expects an object like { method, url, headers, body }.');
          const refused = hostHttp(json, (ok, text) => (ok ? resolve(parse(text)) : reject(new Error(text))));
          if (refused !== undefined) reject(new Error(refused));
        });
      },
    });
  }
  globalThis.Context = freeze(Context);
  globalThis.console = freeze({ log: Log, info: Log, debug: Log, warn: Log, error: logger('error') });

  return {
    collect() {
      const source = responseSet ? response : entityLoaded ? entity : undefined;
      if (source === undefined) return undefined;
      return stringify({ body: source === null ? undefined : source.ResponseBody });
    },
    describe(error) {
      try {
        if (error instanceof Error) {
          return stringify({ message: (String(error.name) + ': ' + String(error.message)).slice(0, 2000), stack: String(error.stack || '').slice(0, 4000) });
        }
        return stringify({ message: ('Uncaught ' + show(error)).slice(0, 2000), stack: '' });
      } catch (_) {
        return '{"message":"The connector threw a value that cannot be described.","stack":""}';
      }
    },
  };
})`;
