// multipart/form-data bodies: the parts of a body, and a body written back from parts.

/** The boundary a `multipart/form-data` content type names; null when it names none. */
export function boundaryOf(contentType: string): string | null {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  return m ? (m[1] ?? m[2]!.trim()) : null;
}

export interface MultipartPart {
  /** the field name in its Content-Disposition; null when it has none */
  name: string | null;
  filename: boolean;
  /** the part's header lines as sent, without the blank line that ends them */
  headerText: string;
  value: Buffer;
  /** byte range of the whole part, delimiter included, so it can be cut out */
  start: number;
  end: number;
}

/** Splits a multipart body into its parts; null when the body is not well formed. */
export function multipartParts(body: Buffer, boundary: string): MultipartPart[] | null {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: MultipartPart[] = [];
  let pos = body.indexOf(delimiter);
  if (pos < 0) return null;
  for (;;) {
    const afterDelimiter = pos + delimiter.length;
    if (body[afterDelimiter] === 0x2d && body[afterDelimiter + 1] === 0x2d) return parts; // closing "--"
    const headersStart = body.indexOf('\r\n', afterDelimiter);
    if (headersStart < 0) return null;
    const headersEnd = body.indexOf('\r\n\r\n', headersStart);
    if (headersEnd < 0) return null;
    const next = body.indexOf(Buffer.from(`\r\n--${boundary}`), headersEnd);
    if (next < 0) return null;
    const headerText = body.subarray(headersStart + 2, headersEnd).toString('latin1');
    const disposition = /content-disposition:[^\r\n]*/i.exec(headerText)?.[0] ?? '';
    const name = /\bname="([^"]*)"/i.exec(disposition)?.[1] ?? null;
    parts.push({ name, filename: /\bfilename=/i.test(disposition), headerText, value: body.subarray(headersEnd + 4, next), start: pos, end: next + 2 });
    pos = next + 2;
  }
}

/** A part holding a plain value, as Kong's multipart library writes one (`set_simple`). */
export function simplePart(name: string, value: string): Pick<MultipartPart, 'name' | 'filename' | 'headerText' | 'value'> {
  return { name, filename: false, headerText: `Content-Disposition: form-data; name="${name}"`, value: Buffer.from(value) };
}

/** The body of `parts` with `boundary`: each part's headers and value, then the closing delimiter. */
export function multipartBody(parts: ReadonlyArray<Pick<MultipartPart, 'headerText' | 'value'>>, boundary: string): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) chunks.push(Buffer.from(`--${boundary}\r\n${part.headerText}\r\n\r\n`, 'latin1'), part.value, Buffer.from('\r\n'));
  chunks.push(Buffer.from(`--${boundary}--\r\n`, 'latin1'));
  return Buffer.concat(chunks);
}
