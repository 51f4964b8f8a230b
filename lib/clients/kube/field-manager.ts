/** drainbridge's field manager name on its writes (`?fieldManager=`), recorded by the apiserver in managedFields. */
export const FIELD_MANAGER = 'drainbridge';
