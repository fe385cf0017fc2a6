// A view that reads again before its last read answered (a new choice, a live refresh) draws only the
// latest read's answer, in whatever order the answers come back.

/**
 * Call the returned function as a read starts; what it returns tells whether that read is still the latest.
 * @returns {() => () => boolean}
 */
export function latestRead() {
  let started = 0;
  return () => {
    const turn = ++started;
    return () => turn === started;
  };
}
