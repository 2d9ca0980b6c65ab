import { boundaryOf, multipartBody, multipartParts, simplePart, type MultipartPart } from '../shared/multipart';
import type { TransformPlan } from '../shared/transform-ops';

type Part = Pick<MultipartPart, 'name' | 'filename' | 'headerText' | 'value'>;

/** A field's value set as Kong's `set_simple` does: the first part of that name takes it, or a new part is added last. */
function setSimple(parts: Part[], name: string, value: Buffer | string): void {
  const text = typeof value === 'string' ? value : value.toString('utf8');
  const at = parts.findIndex((p) => p.name === name);
  if (at < 0) parts.push(simplePart(name, text));
  else parts[at] = { ...parts[at]!, value: Buffer.from(text) };
}

function without(parts: Part[], name: string): Part[] {
  return parts.filter((p) => p.name !== name);
}

/**
 * Kong's request-transformer on a `multipart/form-data` body: rename, remove and replace (on a body that is not
 * empty), then add; `append` does not apply to multipart bodies. A renamed or replaced field becomes a plain part,
 * written last; other parts keep their bytes. Returns the new body, or null when nothing changed or the body cannot
 * be read (no boundary, malformed): it then passes unchanged.
 */
export function transformMultipart(body: Buffer, contentType: string, plan: TransformPlan): Buffer | null {
  const boundary = boundaryOf(contentType);
  if (boundary === null) return null;
  const parsed = body.length === 0 ? [] : multipartParts(body, boundary);
  if (parsed === null) return null;
  let parts: Part[] = parsed;
  let changed = false;
  if (body.length > 0) {
    for (const [from, to] of plan.rename) {
      const part = parts.find((p) => p.name === from);
      if (part === undefined || from === to) continue;
      setSimple(parts, to, part.value);
      parts = without(parts, from);
      changed = true;
    }
    for (const name of plan.remove) {
      parts = without(parts, name);
      changed = true;
    }
    for (const [name, value] of plan.replace) {
      if (!parts.some((p) => p.name === name)) continue;
      parts = without(parts, name);
      setSimple(parts, name, value);
      changed = true;
    }
  }
  for (const [name, value] of plan.add) {
    if (parts.some((p) => p.name === name)) continue;
    setSimple(parts, name, value);
    changed = true;
  }
  return changed ? multipartBody(parts, boundary) : null;
}
