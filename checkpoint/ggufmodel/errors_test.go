package ggufmodel

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInDir checks that InDir names the file by its path once.
func TestInDir(t *testing.T) {
	dir := filepath.Join("models", "llama")
	err := InDir(&MissingKeyError{Key: "llama.context_length", File: ConfigFile, Fields: []string{"max_position_embeddings", "n_ctx"}}, dir, ConfigFile)
	assert.Equal(t, filepath.Join(dir, "config.json")+" has none of max_position_embeddings, n_ctx: llama.cpp requires llama.context_length", err.Error())
	var mk *MissingKeyError
	require.True(t, errors.As(err, &mk))

	err = InDir(&UnsupportedError{File: ConfigFile, Field: "head_dim", Value: "3", Reason: "odd"}, dir, ConfigFile)
	assert.Equal(t, filepath.Join(dir, "config.json")+`: head_dim "3": odd`, err.Error())

	// A file named by its path already is left as it is; other errors are
	// wrapped with the path.
	in := &UnsupportedError{File: filepath.Join("d", tokenizerFile), Reason: "x"}
	assert.Equal(t, in.Error(), InDir(in, dir, ConfigFile).Error())
	other := errors.New("boom")
	err = InDir(other, dir, ConfigFile)
	assert.Equal(t, filepath.Join(dir, "config.json")+": boom", err.Error())
	assert.ErrorIs(t, err, other)
	assert.NoError(t, InDir(nil, dir, ConfigFile))
}
