/**
 * A tiny XML well-formedness check for the SVG output: balanced tags, quoted attributes, no raw
 * '<' or stray '&' in text. Returns the problems (empty when well formed) and the element names seen.
 */
export function checkXml(text: string): { problems: string[]; elements: string[] } {
  const problems: string[] = [];
  const elements: string[] = [];
  const stack: string[] = [];
  const entity = /^&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/;
  let i = 0;
  let roots = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '&') {
      if (!entity.test(text.slice(i))) problems.push(`stray & at ${i}`);
      i++;
      continue;
    }
    if (c !== '<') {
      if (stack.length === 0 && c !== undefined && !/\s/.test(c)) problems.push(`text outside the root at ${i}`);
      i++;
      continue;
    }
    const end = text.indexOf('>', i);
    if (end < 0) {
      problems.push(`unclosed tag at ${i}`);
      break;
    }
    const tag = text.slice(i + 1, end);
    i = end + 1;
    if (tag.startsWith('?') || tag.startsWith('!--')) continue;
    if (tag.startsWith('/')) {
      const name = tag.slice(1).trim();
      const open = stack.pop();
      if (open !== name) problems.push(`</${name}> closes <${open ?? 'nothing'}>`);
      continue;
    }
    const selfClosing = tag.endsWith('/');
    const body = selfClosing ? tag.slice(0, -1) : tag;
    const match = /^([A-Za-z_][\w:.-]*)((?:\s+[A-Za-z_][\w:.-]*="[^"<]*")*)\s*$/.exec(body);
    if (!match) {
      problems.push(`malformed tag <${tag.slice(0, 60)}>`);
      continue;
    }
    const name = match[1] as string;
    const attributes = [...(match[2] ?? '').matchAll(/([A-Za-z_][\w:.-]*)=/g)].map((m) => m[1]);
    if (new Set(attributes).size !== attributes.length) problems.push(`duplicate attribute in <${name}>`);
    for (const value of (match[2] ?? '').matchAll(/="([^"]*)"/g)) {
      const v = value[1] ?? '';
      for (let k = v.indexOf('&'); k >= 0; k = v.indexOf('&', k + 1))
        if (!entity.test(v.slice(k))) problems.push(`stray & in an attribute of <${name}>`);
    }
    if (stack.length === 0) roots++;
    elements.push(name);
    if (!selfClosing) stack.push(name);
  }
  if (stack.length > 0) problems.push(`unclosed elements: ${stack.join(', ')}`);
  if (roots !== 1) problems.push(`${roots} root elements`);
  return { problems, elements };
}
