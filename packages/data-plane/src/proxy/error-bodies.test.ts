import { describe, expect, it } from '@jest/globals';
import { errorBody, errorBodyType, parseErrorDefaultType } from './error-bodies';

describe("error bodies by Accept (Kong's get_response_type)", () => {
  it('takes the highest quality, the first on ties, and maps wildcards', () => {
    expect(errorBodyType('text/html', 'application/json')).toBe('text/html');
    expect(errorBodyType('application/xml;q=0.2, text/plain;q=0.8', 'application/json')).toBe('text/plain');
    expect(errorBodyType('text/html, application/xml', 'application/json')).toBe('text/html');
    expect(errorBodyType('text/*', 'application/json')).toBe('text/plain');
    expect(errorBodyType('*/*', 'text/html')).toBe('application/json');
    expect(errorBodyType('image/png', 'text/html')).toBe('application/json');
  });

  it('uses error_default_type only without Accept', () => {
    expect(errorBodyType(undefined, 'application/xml')).toBe('application/xml');
    expect(errorBodyType('', 'text/plain')).toBe('text/plain');
  });

  it("renders Kong's templates, escaping markup", () => {
    expect(errorBody('text/plain', 'Not found', 'abc')).toBe('Not found\nrequest_id: abc\n');
    expect(errorBody('application/xml', 'a<b', 'abc')).toContain('<message>a&lt;b</message>');
    expect(errorBody('text/html', 'Bad gateway', 'abc')).toContain('<p>Bad gateway.</p>\n    <p>request_id: abc</p>');
    expect(errorBody('application/json', 'x', 'abc')).toBeNull();
  });

  it('reads GATEHOUSE_ERROR_DEFAULT_TYPE', () => {
    expect(parseErrorDefaultType(undefined)).toBe('application/json');
    expect(parseErrorDefaultType('text/html')).toBe('text/html');
    expect(() => parseErrorDefaultType('text/csv')).toThrow(/GATEHOUSE_ERROR_DEFAULT_TYPE/);
  });
});
