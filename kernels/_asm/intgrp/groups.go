package main

func groupKernels(isa string) {}
