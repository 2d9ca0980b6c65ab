export * from './llhttp';
