export * from './vault-reference';
export * from './pem';
export * from './sni-name';
