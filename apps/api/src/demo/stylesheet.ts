/**
 * The demo client's stylesheet (/demo.css): plain, a little deliberate, no framework. System fonts, one accent
 * colour, cards for the sections, small labels for a document's state, embargo and legal hold.
 */
export const DEMO_STYLESHEET = `
:root { --ink: #1d2430; --muted: #5b6575; --line: #dfe3ea; --paper: #f6f7f9; --accent: #2f5bd3; --ok: #1f7a44; --warn: #9a5b00; --bad: #a3262b; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--paper); }
header, main { max-width: 46rem; margin: 0 auto; padding: 0 1rem; }
header { padding-top: 2rem; }
h1 { font-size: 1.6rem; margin: 0; }
h2 { font-size: 1.1rem; margin: 0 0 .5rem; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.25rem; margin: 1rem 0; }
.muted { color: var(--muted); font-size: .95rem; }
.error { color: var(--bad); }
.error:empty, [role=status]:empty { display: none; }
button { font: inherit; padding: .35rem .9rem; border: 1px solid var(--line); border-radius: 6px; background: #fff; color: var(--ink); cursor: pointer; }
button:hover { border-color: var(--accent); }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
input { font: inherit; padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 6px; }
pre { background: var(--paper); border: 1px solid var(--line); border-radius: 6px; padding: .75rem; overflow-x: auto; font-size: .85rem; }
pre.token { white-space: pre-wrap; word-break: break-all; }
ul.documents, ul.passkeys { list-style: none; padding: 0; margin: 0; }
ul.documents li, ul.passkeys li { padding: .6rem 0; border-top: 1px solid var(--line); }
ul.documents li:first-child, ul.passkeys li:first-child { border-top: 0; }
.why { margin: .2rem 0 0; color: var(--muted); font-size: .9rem; }
ul.documents button { font-size: .85rem; padding: .15rem .6rem; margin-top: .35rem; }
.badge { display: inline-block; margin-left: .3rem; padding: 0 .45rem; border-radius: 999px; font-size: .75rem; line-height: 1.5rem; border: 1px solid; }
.badge.ok { color: var(--ok); border-color: var(--ok); }
.badge.hidden { color: var(--warn); border-color: var(--warn); }
.badge.hold { color: var(--bad); border-color: var(--bad); }
`;
