import { describe, expect, it } from '@jest/globals';
import { grpcStatusOf } from './grpc-status';
import { parseGrpcTimeout } from './grpc-timeout';

describe('gRPC statuses of the gateway’s answers', () => {
  it("maps HTTP statuses as Kong's table does, by class otherwise", () => {
    expect([200, 400, 401, 403, 404, 409, 429, 499, 500, 501, 503, 504].map(grpcStatusOf)).toEqual([0, 3, 16, 7, 5, 6, 8, 1, 13, 12, 14, 4]);
    expect([502, 413, 204, 302].map(grpcStatusOf)).toEqual([13, 3, 0, 2]);
  });

  it('reads grpc-timeout in each unit and refuses malformed values', () => {
    expect(parseGrpcTimeout('2S')).toBe(2000);
    expect(parseGrpcTimeout('150m')).toBe(150);
    expect(parseGrpcTimeout('1M')).toBe(60_000);
    expect(parseGrpcTimeout('1H')).toBe(3_600_000);
    expect(parseGrpcTimeout('5000u')).toBe(5);
    expect(parseGrpcTimeout('123456789S')).toBeNull();
    expect(parseGrpcTimeout('5s')).toBeNull();
    expect(parseGrpcTimeout(undefined)).toBeNull();
  });
});
