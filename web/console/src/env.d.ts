// Vite bundles the stylesheets a module imports.
declare module '*.css';
