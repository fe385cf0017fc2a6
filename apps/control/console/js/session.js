// The admin token lives in this tab's sessionStorage only: gone when the tab closes, never in a URL,
// never in localStorage or a cookie.
const KEY = 'gi.console.adminToken';

/** @returns {string | null} */
export const savedToken = () => sessionStorage.getItem(KEY);

/** @param {string} token */
export const saveToken = (token) => sessionStorage.setItem(KEY, token);

export const forgetToken = () => sessionStorage.removeItem(KEY);
