/** Escapes text for HTML content and attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A small, accessible page: one heading, one main region, no external resources. */
export function page(title: string, body: string, script = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Latchkey</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}label{display:block;margin:.5rem 0 .25rem}input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}button{font:inherit;margin-top:1rem;padding:.4rem 1rem}.error{color:#a00}label.inline input{width:auto;margin-right:.5rem}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
${script ? `<script>${script}</script>` : ''}
</body>
</html>
`;
}

/** A moment as the pages show it: to the minute, in UTC. */
export const when = (date: Date | number) => `${new Date(date).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
