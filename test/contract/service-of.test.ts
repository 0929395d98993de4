import { describe, expect, it } from 'vitest';
import { serviceOf } from '../../src/contract/paths.js';

describe('the service a base URL names', () => {
  it('is its origin and path, trailing slashes dropped: two paths on one origin are two services', () => {
    expect(serviceOf('https://api.example.com')).toBe('https://api.example.com');
    expect(serviceOf('https://api.example.com/')).toBe('https://api.example.com');
    expect(serviceOf('https://gw.example.com/a//')).toBe('https://gw.example.com/a');
    expect(serviceOf(new URL('https://gw.example.com/b'))).toBe('https://gw.example.com/b');
    expect(serviceOf('HTTPS://API.Example.com:443/v2/')).toBe('https://api.example.com/v2');
  });
});
