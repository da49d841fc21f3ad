package pipeline

import (
	"github.com/r2med/r2med/config"
	"github.com/r2med/r2med/expand"
	"github.com/r2med/r2med/gar"
)

// A run's settings are package config's (pipeline files and the run
// flags make them), its expand stage's package gar's: these are their
// names as callers of Run know them.
type (
	// Config is every knob that changes a run's numbers.
	Config = config.Config
	// Fuse is a Config's fusion stage.
	Fuse = config.Fuse
	// Rerank is a Config's rerank stage.
	Rerank = config.Rerank
	// RerankMerge is diver's merge of two rerankers.
	RerankMerge = config.RerankMerge
	// Remote bounds a Config's calls to model servers.
	Remote = config.Remote
	// Generate makes a run's expansions with an LLM.
	Generate = gar.Spec
	// GenerateOptions are a generation's run-time companions.
	GenerateOptions = gar.Options
)

// DefaultConfig is R2MED's BM25 setup.
func DefaultConfig() Config { return config.Default() }

// DefaultGenerate is R2MED's sampling for generations.
func DefaultGenerate() Generate { return gar.Default() }

// SubjectOf is how a generation's prompts address the task's queries.
func SubjectOf(task string, g Generate) (expand.Subject, error) { return gar.SubjectOf(task, g) }
