package main

// version_fast.c answers `fuscia version` before the Go runtime starts; this file only lets the
// tests read the texts it prints.

/*
extern const char *const fuscia_version_text;
extern const char *const fuscia_version_json;
*/
import "C"

// fastVersionTexts returns what version_fast.c prints for `fuscia version` and for
// `fuscia version -json`.
func fastVersionTexts() (text, json string) {
	return C.GoString(C.fuscia_version_text), C.GoString(C.fuscia_version_json)
}
